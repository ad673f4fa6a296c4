// The report's timeline: one lane per task, one box per poll, drawn on a canvas
// from the JSON in #gasync-data. Wheel to zoom around the pointer, drag to pan,
// double-click to see the whole run again; hovering a box shows the poll's
// instance, states, times and executor. Everything is in this page: no network.
// The axis's ticks all use one unit, with as many decimals as the step needs; a
// box narrower than BORDER_MIN px gets no border (a border would paint it black).
// The canvas says what it drew in data-left (the lanes' left edge, after the
// widest task label) and data-ticks (the tick labels), for tests and scripts.
(function () {
  "use strict";
  const data = JSON.parse(document.getElementById("gasync-data").textContent);
  const canvas = document.getElementById("timeline");
  const tip = document.getElementById("timeline-tip");
  const ctx = canvas.getContext("2d");
  const LANE = 26, TOP = 26, RIGHT = 10, BORDER_MIN = 6, FONT = "12px sans-serif";
  ctx.font = FONT;
  const LEFT = Math.min(400, Math.max(170, ...data.tasks.map((task) => ctx.measureText(task.label).width + 18)));
  canvas.dataset.left = String(LEFT);
  const PALETTE = ["#8dd3c7", "#fdb462", "#bebada", "#fb8072", "#80b1d3", "#b3de69", "#fccde5", "#bc80bd", "#ccebc5", "#ffed6f"];
  const span = Math.max(1, data.span);
  let v0 = 0, v1 = span, drag = null;

  // polls per lane, in start order, for the hover search
  const lanes = data.tasks.map(() => []);
  for (const p of data.polls) lanes[p[0]].push(p);
  for (const l of lanes) l.sort((a, b) => a[2] - b[2]);

  function unit(ns) {
    if (ns >= 1e9) return [1e9, "s"];
    if (ns >= 1e6) return [1e6, "ms"];
    if (ns >= 1e3) return [1e3, "us"];
    return [1, "ns"];
  }
  function fmt(ns) {
    const [d, u] = unit(Math.abs(ns) || 1);
    return (ns / d).toPrecision(4).replace(/\.?0+$/, "") + " " + u;
  }
  // a tick in the unit of the window's end, with the decimals the step needs
  function tick(ns, step) {
    const [d, u] = unit(Math.max(v1, 1));
    const decimals = Math.max(0, Math.ceil(-Math.log10(step / d) - 1e-9));
    const text = (ns / d).toFixed(Math.min(decimals, 9));
    return (text.includes(".") ? text.replace(/\.?0+$/, "") : text) + " " + u;
  }
  const width = () => canvas.width - LEFT - RIGHT;
  const x = (t) => LEFT + ((t - v0) / (v1 - v0)) * width();
  const t = (px) => v0 + ((px - LEFT) / width()) * (v1 - v0);

  function draw() {
    ctx.clearRect(0, 0, canvas.width, canvas.height);
    ctx.font = FONT;
    ctx.textBaseline = "middle";
    const raw = (v1 - v0) / 8;
    const mag = raw >= 1 ? Math.pow(10, Math.floor(Math.log10(raw))) : 1;
    const step = [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= raw);
    ctx.strokeStyle = "#ddd";
    ctx.fillStyle = "#444";
    const ticks = [];
    for (let n = Math.ceil(v0 / step); n * step <= v1; n++) {
      const px = x(n * step);
      ticks.push(tick(n * step, step));
      ctx.beginPath(); ctx.moveTo(px, TOP - 6); ctx.lineTo(px, canvas.height); ctx.stroke();
      ctx.fillText(ticks[ticks.length - 1], px + 3, 10);
    }
    canvas.dataset.ticks = ticks.join(" | ");
    data.tasks.forEach((task, k) => {
      const y = TOP + k * LANE;
      ctx.fillStyle = k % 2 ? "#fafafa" : "#f0f0f0";
      ctx.fillRect(LEFT, y, width(), LANE);
      ctx.fillStyle = "#222";
      ctx.fillText(task.label, 6, y + LANE / 2, LEFT - 12); // squeezed only past 400 px
      ctx.fillStyle = PALETTE[k % PALETTE.length];
      ctx.strokeStyle = "#333";
      for (const p of lanes[k]) {
        if (p[3] < v0 || p[2] > v1) continue;
        const x0 = Math.max(LEFT, x(p[2])), x1 = Math.min(LEFT + width(), x(p[3]));
        const w = Math.max(1, x1 - x0);
        ctx.fillRect(x0, y + 3, w, LANE - 6);
        if (p[7] && w >= BORDER_MIN) { ctx.lineWidth = 2; ctx.strokeRect(x0, y + 3, w, LANE - 6); ctx.lineWidth = 1; }
      }
    });
  }

  function resize() {
    canvas.width = Math.max(400, canvas.parentElement.clientWidth);
    canvas.height = TOP + LANE * data.tasks.length + 4;
    draw();
  }

  function hit(ev) {
    const r = canvas.getBoundingClientRect();
    const mx = ev.clientX - r.left, my = ev.clientY - r.top;
    const k = Math.floor((my - TOP) / LANE);
    if (k < 0 || k >= lanes.length || mx < LEFT) return null;
    const slack = (2 * (v1 - v0)) / width(); // two pixels, so a thin box can be found
    const at = t(mx);
    let best = null;
    for (const p of lanes[k]) {
      if (p[2] > at + slack) break;
      if (p[3] >= at - slack) best = p;
    }
    return best;
  }

  function label(p) {
    const task = data.tasks[p[0]];
    const name = task.names ? task.names[p[1]] : task.count === 1 ? task.name : task.name + "[" + p[1] + "]";
    const st = (s) => (data.states[task.name] || {})[s] || "s" + s;
    return name + ": " + st(p[4]) + " \u2192 " + st(p[5]) + "\n" + fmt(p[2]) + " .. " + fmt(p[3]) +
      " (" + fmt(p[3] - p[2]) + ") on executor " + p[6] + (p[7] ? ", ready" : "");
  }

  canvas.addEventListener("wheel", (ev) => {
    ev.preventDefault();
    const r = canvas.getBoundingClientRect();
    const at = t(ev.clientX - r.left), f = ev.deltaY > 0 ? 1.25 : 0.8;
    const w = Math.max(10, Math.min(span, (v1 - v0) * f));
    v0 = Math.max(0, at - ((at - v0) / (v1 - v0)) * w);
    v1 = Math.min(span, v0 + w);
    draw();
  }, { passive: false });
  canvas.addEventListener("mousedown", (ev) => { drag = { x: ev.clientX, v0, v1 }; });
  window.addEventListener("mouseup", () => { drag = null; });
  canvas.addEventListener("dblclick", () => { v0 = 0; v1 = span; draw(); });
  canvas.addEventListener("mousemove", (ev) => {
    if (drag) {
      const d = ((ev.clientX - drag.x) / width()) * (drag.v1 - drag.v0);
      const w = drag.v1 - drag.v0;
      v0 = Math.min(Math.max(0, drag.v0 - d), span - w);
      v1 = v0 + w;
      draw();
    }
    const p = hit(ev);
    tip.style.display = p ? "block" : "none";
    if (p) {
      tip.textContent = label(p);
      tip.style.left = ev.pageX + 12 + "px";
      tip.style.top = ev.pageY + 12 + "px";
    }
  });
  window.addEventListener("resize", resize);
  resize();
  document.getElementById("timeline-status").textContent =
    data.polls.length + " polls of " + data.tasks.length + " tasks over " + fmt(span);
})();
