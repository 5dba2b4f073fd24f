// kbench's interactive leaderboard: sortable tables and, per task, Plotly charts of the
// selected dataset, kernel and metric. Plotly is inlined once, gzip-compressed, and
// decompressed in the browser (DecompressionStream): the page makes no network request.
"use strict";

const DATA = JSON.parse(document.getElementById("kbench-data").textContent);

async function loadPlotly() {
  const text = document.getElementById("plotly-gz").textContent.trim();
  const bytes = Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
  const script = document.createElement("script");
  script.textContent = await new Response(stream).text();
  document.head.appendChild(script);
}

// ---- sortable tables -------------------------------------------------------------------
function sortValue(cell) {
  const text = (cell.dataset.sort ?? cell.textContent).trim();
  const beyond = /^>\s*(.+)$/.exec(text);  // "> 10": a rank past the largest swept, 10: after it
  const number = beyond ? parseFloat(beyond[1]) + 0.5 : parseFloat(text);
  return Number.isNaN(number) ? text : number;
}

function sortTable(table, column, header) {
  const body = table.tBodies[0];
  const rows = Array.from(body.rows);
  const ascending = header.getAttribute("aria-sort") !== "ascending";
  const values = rows.map((row) => sortValue(row.cells[column]));
  // numbers, and words without a digit ("—", "not ranked"), which go last in both directions
  const numeric = values.some((v) => typeof v === "number") &&
    values.every((v) => typeof v === "number" || !/\d/.test(v));
  rows.sort((a, b) => {
    let x = sortValue(a.cells[column]), y = sortValue(b.cells[column]);
    if (numeric) {
      x = typeof x === "number" ? x : null; y = typeof y === "number" ? y : null;
      if (x === null || y === null) return (x === null) - (y === null);
      return ascending ? x - y : y - x;
    }
    return ascending ? String(x).localeCompare(String(y)) : String(y).localeCompare(String(x));
  });
  rows.forEach((row) => body.appendChild(row));
  table.querySelectorAll("thead th").forEach((th) => th.removeAttribute("aria-sort"));
  header.setAttribute("aria-sort", ascending ? "ascending" : "descending");
}

function makeSortable(table) {
  const headers = table.tHead ? Array.from(table.tHead.rows[table.tHead.rows.length - 1].cells) : [];
  headers.forEach((th, column) => th.addEventListener("click", () => sortTable(table, column, th)));
}

// ---- charts ----------------------------------------------------------------------------
function fmt(value) {
  return value === null || value === undefined ? "—" : Number(value).toPrecision(4);
}

// a label as Plotly's text shows it: Plotly reads <b>, <i>, <br> and &…; in names, so a
// label's own "<" and "&" are escaped, and the legend reads as the tables do
const plain = (text) => String(text).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

function rowsOf(board, dataset, kernel) {
  const c = board.columns;
  return board.rows.filter((r) => r[c.dataset] === dataset && r[c.kernel] === kernel);
}

function hover(board, row, metric) {
  const c = board.columns, m = (part) => row[c[`${metric}:${part}`]];
  return `<b>${plain(row[c.sampler])}</b> · rank ${row[c.rank]}<br>${plain(row[c.dataset])} · ${plain(row[c.kernel])}` +
    `<br>${plain(metric)}: ${fmt(m("mean"))} ± ${fmt(m("sd"))} (min ${fmt(m("min"))}, max ${fmt(m("max"))},` +
    ` ${m("n")} repetition(s))<br>seconds: ${fmt(row[c.seconds])}<br>cells: ${row[c.status]}`;
}

function ranks(rows, c) {
  return [...new Set(rows.map((r) => r[c.rank]))].sort((a, b) => a - b);
}

function paretoFront(points, smaller) {
  const sorted = points.slice().sort((a, b) => a.x - b.x || (smaller ? a.y - b.y : b.y - a.y));
  const front = [];
  for (const p of sorted) {
    const last = front[front.length - 1];
    if (!last || (smaller ? p.y < last.y : p.y > last.y)) front.push(p);
  }
  return front;
}

function draw(board, root) {
  const c = board.columns;
  const dataset = root.querySelector("select.dataset").value;
  const kernel = root.querySelector("select.kernel").value;
  const metric = root.querySelector("select.metric").value;
  const info = board.metrics.find((m) => m.name === metric);
  const rows = rowsOf(board, dataset, kernel).filter((r) => r[c[`${metric}:mean`]] !== null);
  const samplers = [...new Set(rows.map((r) => r[c.sampler]))].sort();
  const byRank = [], byTime = [], points = [];
  for (const sampler of samplers) {
    const own = rows.filter((r) => r[c.sampler] === sampler).sort((a, b) => a[c.rank] - b[c.rank]);
    const y = own.map((r) => r[c[`${metric}:mean`]]);
    const text = own.map((r) => hover(board, r, metric));
    const look = DATA.styles[sampler] || {};
    byRank.push({
      type: "scatter", mode: "lines+markers", name: plain(sampler), legendgroup: sampler,
      line: {color: look.color, dash: look.dash}, marker: {color: look.color, symbol: look.symbol, size: 7},
      x: own.map((r) => r[c.rank]), y, text, hoverinfo: "text",
      error_y: {type: "data", symmetric: false, thickness: 1,
        array: own.map((r) => r[c[`${metric}:max`]] - r[c[`${metric}:mean`]]),
        arrayminus: own.map((r) => r[c[`${metric}:mean`]] - r[c[`${metric}:min`]])},
    });
    byTime.push({type: "scatter", mode: "markers", name: plain(sampler), legendgroup: sampler,
      marker: {color: look.color, symbol: look.symbol, size: 8},
      x: own.map((r) => r[c.seconds]), y, text, hoverinfo: "text"});
    own.forEach((r) => points.push({x: r[c.seconds], y: r[c[`${metric}:mean`]]}));
  }
  if (info.exact) {
    const exact = new Map();
    rows.forEach((r) => { if (r[c[`${metric}:exact`]] !== null) exact.set(r[c.rank], r[c[`${metric}:exact`]]); });
    const ranks = [...exact.keys()].sort((a, b) => a - b);
    if (ranks.length) byRank.push({type: "scatter", mode: "lines", name: "exact kernel",
      x: ranks, y: ranks.map((r) => exact.get(r)), line: {dash: "dash", color: "black", width: 2}});
  }
  const front = paretoFront(points.filter((p) => p.x > 0), info.smaller);
  if (front.length) byTime.push({type: "scatter", mode: "lines", name: "Pareto front", hoverinfo: "skip",
    x: front.map((p) => p.x), y: front.map((p) => p.y), line: {color: "black", width: 1}});
  const positive = points.every((p) => p.y > 0);
  const yaxis = {title: {text: plain(metric)}, type: info.smaller && positive ? "log" : "linear", exponentformat: "e"};
  // every chart has its legend, below the axes where the mode bar (upright at the right edge,
  // clear of the left-aligned title) cannot cover it
  const layout = (title, xaxis) => ({title: {text: title, font: {size: 13}, x: 0.02, xanchor: "left"}, xaxis,
    yaxis, height: 640, margin: {t: 60, r: 40}, showlegend: true, hovermode: "closest",
    legend: {font: {size: 10}, orientation: "h", x: 0, xanchor: "left", y: -0.18, yanchor: "top"},
    modebar: {orientation: "v"}});
  const config = {displaylogo: false, responsive: true};
  // two lines: a dataset spec is long, and a title wider than its chart is cut
  const where = `${plain(board.label)} on ${plain(dataset)}<br>[${plain(kernel)}]`;
  Plotly.react(root.querySelector(".chart.rank"), byRank,
    layout(`${where} ${plain(metric)} vs rank`, {title: {text: "rank"}, type: "log", tickvals: ranks(rows, c),
      exponentformat: "e"}), config);
  Plotly.react(root.querySelector(".chart.time"), byTime,
    layout(`${plain(metric)} vs time (Pareto front)`, {title: {text: "seconds (sample + features + fit)"}, type: "log", exponentformat: "e"}),
    config);
  meansTable(board, root, rows, metric, samplers);
}

function meansTable(board, root, rows, metric, samplers) {
  const c = board.columns, columns = ranks(rows, c);
  const table = document.createElement("table");
  table.className = "sortable means";
  const head = table.createTHead().insertRow();
  ["sampler", ...columns.map((r) => `rank ${r}`)].forEach((t) => { head.appendChild(document.createElement("th")).textContent = t; });
  const body = table.createTBody();
  for (const sampler of samplers) {
    const tr = body.insertRow();
    tr.insertCell().textContent = sampler;
    for (const rank of columns) {
      const row = rows.find((r) => r[c.sampler] === sampler && r[c.rank] === rank);
      tr.insertCell().textContent = row ? fmt(row[c[`${metric}:mean`]]) : "—";
    }
  }
  const old = root.querySelector("table.means");
  old.replaceWith(table);
  makeSortable(table);
}

function fillSelect(select, values, chosen) {
  select.replaceChildren(...values.map((v) => new Option(v, v, false, v === chosen)));
}

function setUp(board) {
  const root = document.getElementById(board.id);
  const c = board.columns;
  const datasets = [...new Set(board.rows.map((r) => r[c.dataset]))].sort();
  const dataset = root.querySelector("select.dataset"), kernel = root.querySelector("select.kernel");
  const metric = root.querySelector("select.metric");
  const kernels = () => [...new Set(board.rows.filter((r) => r[c.dataset] === dataset.value).map((r) => r[c.kernel]))].sort();
  fillSelect(dataset, datasets, datasets[0]);
  fillSelect(kernel, kernels(), kernels()[0]);
  fillSelect(metric, board.metrics.map((m) => m.name), board.metrics[0].name);
  dataset.addEventListener("change", () => { fillSelect(kernel, kernels(), kernels()[0]); draw(board, root); });
  kernel.addEventListener("change", () => draw(board, root));
  metric.addEventListener("change", () => draw(board, root));
  draw(board, root);
}

function costChart(cost) {
  const traces = cost.samplers.map((sampler, i) => {
    const look = DATA.styles[sampler] || {};
    return {type: "scatter", mode: "lines+markers", name: plain(sampler), x: cost.sizes, y: cost.seconds[i],
      line: {color: look.color, dash: look.dash}, marker: {color: look.color, symbol: look.symbol, size: 7}};
  });
  Plotly.newPlot(document.getElementById(cost.id), traces, {
    title: {text: `${plain(cost.family)}: cost in n at rank ${cost.rank}`, font: {size: 13}, x: 0.02, xanchor: "left"},
    xaxis: {title: {text: "n_train"}, type: "log", exponentformat: "e"},
    yaxis: {title: {text: "seconds (fit + features)"}, type: "log", exponentformat: "e"},
    height: 560, margin: {t: 40, r: 40}, showlegend: true, modebar: {orientation: "v"},
    legend: {font: {size: 10}, orientation: "h", x: 0, xanchor: "left", y: -0.2, yanchor: "top"}},
    {displaylogo: false, responsive: true});
}

document.querySelectorAll("table.sortable").forEach(makeSortable);
loadPlotly().then(() => {
  DATA.boards.forEach(setUp);
  DATA.costs.forEach(costChart);
  document.getElementById("loading").remove();
  document.body.dataset.ready = "true";
}).catch((error) => {
  document.getElementById("loading").textContent = `The charts could not be drawn: ${error}`;
  throw error;
});
