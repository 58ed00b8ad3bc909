// The page of `roofline ui`: controls → one POST /api/analyze → the plot, the totals, the
// memory and the operators, all drawn from the CLI's JSON; a click → POST /api/explain.
'use strict';

const $ = (id) => document.getElementById(id);
const PRECISIONS = ['fp32', 'bf16', 'fp16', 'fp8', 'int8', 'int4'];
const UPLOAD = '__upload__';

// Every control: its id (the API's field and the URL's key), its kind and the CLI's default.
const CONTROLS = [
  ['model', 'select', 'llama-2-7b'],
  ['hardware', 'select', 'h100-sxm'],
  ['system', 'select', ''],
  ['stage', 'select', 'both'],
  ['batch', 'number', '1'],
  ['seq_len', 'number', '2048'],
  ['context', 'number', '2048'],
  ['precision', 'select', 'bf16'],
  ['weight_precision', 'select', ''],
  ['kv_precision', 'select', ''],
  ['flash_attention', 'check', true],
  ['fusion', 'select', ''],
  ['tp', 'number', '1'],
  ['pp', 'number', '1'],
  ['ep', 'number', '1'],
  ['cp', 'number', '1'],
  ['sequence_parallel', 'check', false],
];

const state = {
  chips: new Map(), // id → `hardware list` entry
  upload: null, // {name, config}
  doc: null, // the last analysis
  seq: 0,
  selected: null, // operator name
};

// ---- numbers ------------------------------------------------------------------------------

const PREFIXES = [[1e15, 'P'], [1e12, 'T'], [1e9, 'G'], [1e6, 'M'], [1e3, 'k'], [1, ''], [1e-3, 'm'], [1e-6, 'µ'], [1e-9, 'n']];

function sig(v) {
  const a = Math.abs(v);
  return a >= 100 ? v.toFixed(0) : a >= 10 ? v.toFixed(1) : v.toFixed(2);
}

// `v` with an SI prefix: 33.6 M, 154.8 T (4 significant digits at most).
function si(v, unit) {
  if (v === null || v === undefined || !Number.isFinite(v)) return '–';
  if (v === 0) return '0' + (unit ? ' ' + unit : '');
  for (const [scale, p] of PREFIXES) {
    if (Math.abs(v) >= scale * 0.9995) return sig(v / scale) + ' ' + p + (unit || '');
  }
  return v.toExponential(2) + (unit ? ' ' + unit : '');
}

const seconds = (v) => si(v, 's');
const bytes = (v) => si(v, 'B');

function plain(v) {
  if (typeof v !== 'number') return String(v);
  if (Number.isInteger(v)) return v.toLocaleString('en-US');
  return sig(v);
}

// A value by the name of its field: `_s` seconds, `_bytes` bytes, `per_s` rates.
function byKey(key, v) {
  if (typeof v !== 'number') return v === null || v === undefined ? '–' : String(v);
  if (key.endsWith('tokens_per_s') || key.endsWith('tokens_per_s_per_device')) return plain(v);
  if (key.endsWith('_s')) return seconds(v);
  if (key.endsWith('bytes') || key.startsWith('bytes')) return bytes(v);
  if (key === 'flops') return si(v, 'FLOP');
  if (key === 'arithmetic_intensity') return sig(v) + ' FLOP/B';
  return plain(v);
}

// A headline field in short words: `prompt_tokens_per_s` → `prompt tok/s`.
const words = (key) => ({
  ttft_s: 'TTFT', tpot_s: 'TPOT', prompt_tokens_per_s: 'prompt tok/s', output_tokens_per_s: 'output tok/s',
  prompt_tokens_per_s_per_device: 'per device', output_tokens_per_s_per_device: 'per device',
})[key] || key.replace(/_per_s/, '/s').replace(/_s$/, '').replace(/_/g, ' ');

// ---- elements -----------------------------------------------------------------------------

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v !== undefined && v !== null) e.setAttribute(k, v);
  }
  for (const c of children) e.append(c);
  return e;
}

const SVG = 'http://www.w3.org/2000/svg';
function svg(tag, attrs, text) {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v !== undefined && v !== null) e.setAttribute(k, v);
  }
  if (text !== undefined) e.textContent = text;
  return e;
}

function option(value, label) {
  const o = document.createElement('option');
  o.value = value;
  o.textContent = label;
  return o;
}

// ---- settings, URL ------------------------------------------------------------------------

function controlValue(id, kind) {
  const c = $(id);
  return kind === 'check' ? c.checked : c.value;
}

// The request's settings: every control with a value; numbers as numbers when they are whole
// numbers, as typed otherwise (the CLI says what is wrong with them).
function settings() {
  const s = {};
  for (const [id, kind] of CONTROLS) {
    const v = controlValue(id, kind);
    if (kind === 'check') {
      s[id] = v;
    } else if (v !== '') {
      s[id] = kind === 'number' && /^\d+$/.test(v.trim()) ? Number(v) : v;
    }
  }
  if (s.model === UPLOAD && state.upload) s.model = state.upload.config;
  return s;
}

// The settings that differ from the CLI's defaults, as a query string (an uploaded config.json
// is too big for an address, so it is left out).
function query() {
  const q = new URLSearchParams();
  for (const [id, kind, def] of CONTROLS) {
    const v = controlValue(id, kind);
    if (id === 'model' && v === UPLOAD) continue;
    if (kind === 'check') {
      if (v !== def) q.set(id, v ? '1' : '0');
    } else if (v !== def) {
      q.set(id, v);
    }
  }
  return q.toString();
}

// Sets the controls from the address: a value a select lacks is added, so that the API says
// what is wrong with it rather than the page dropping it.
function readQuery() {
  const q = new URLSearchParams(location.search);
  for (const [id, kind] of CONTROLS) {
    if (!q.has(id)) continue;
    const v = q.get(id);
    const c = $(id);
    if (kind === 'check') {
      c.checked = v === '1' || v === 'true';
    } else if (kind === 'select') {
      if (![...c.options].some((o) => o.value === v)) c.append(option(v, v));
      c.value = v;
    } else {
      c.value = v;
    }
  }
}

// ---- requests -----------------------------------------------------------------------------

async function call(path, body) {
  const init = body === undefined ? {} : {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  };
  let res;
  try {
    res = await fetch(path, init);
  } catch (e) {
    return { ok: false, error: { error: 'the server did not answer: ' + e.message, hint: 'is `roofline ui` still running?' } };
  }
  const type = res.headers.get('content-type') || '';
  const data = type.startsWith('application/json') ? await res.json() : await res.text();
  return res.ok ? { ok: true, data } : { ok: false, error: data };
}

function showError(e) {
  const box = $('error');
  box.replaceChildren();
  if (!e) {
    box.hidden = true;
    return;
  }
  box.append(el('div', {}, 'error: ' + (e.error || String(e))));
  if (e.hint) box.append(el('div', { class: 'hint' }, 'hint: ' + e.hint));
  box.hidden = false;
}

// One control changed: one request, then everything redrawn from its answer.
async function update() {
  const seq = ++state.seq;
  // A system's chip replaces the chip chosen (as --system does --hardware).
  $('hardware').disabled = $('system').value !== '';
  history.replaceState(null, '', '?' + query());
  document.body.dataset.state = 'loading';
  const started = performance.now();
  const r = await call('/api/analyze', settings());
  if (seq !== state.seq) return; // a later change is on its way
  if (r.ok) {
    showError(null);
    $('results').classList.remove('stale');
    state.doc = r.data;
    state.selected = null;
    render(r.data);
    $('explain-name').textContent = '';
    $('explain').textContent = 'Click an operator in the plot or the table.';
  } else {
    showError(r.error);
    $('results').classList.add('stale');
  }
  document.body.dataset.elapsedMs = (performance.now() - started).toFixed(1);
  document.body.dataset.generation = String(seq);
  document.body.dataset.state = r.ok ? 'ready' : 'error';
}

async function explain(name) {
  state.selected = name;
  markSelected();
  $('explain-name').textContent = name;
  $('explain').textContent = '…';
  const r = await call('/api/explain', { ...settings(), operator: name, format: 'text' });
  if (state.selected !== name) return;
  $('explain').textContent = r.ok ? r.data : 'error: ' + r.error.error + (r.error.hint ? '\nhint: ' + r.error.hint : '');
  document.body.dataset.explained = name;
}

function markSelected() {
  for (const e of document.querySelectorAll('[data-op]')) {
    e.classList.toggle('selected', e.dataset.op === state.selected);
  }
}

// ---- the analysis -------------------------------------------------------------------------

// The chip of an analysis: its own `hardware` block, or (one device of a layout) the catalog's.
function chipOf(doc) {
  return doc.hardware || state.chips.get(doc.chip) || null;
}

function render(doc) {
  const chip = chipOf(doc);
  // One device's analysis names its model; a layout's, by id.
  const model = typeof doc.model === 'string' ? doc.model : doc.model ? doc.model.name : '';
  const where = doc.system ? `${doc.system} (${doc.system_devices} × ${doc.chip})` : chip ? chip.name : '';
  $('title').textContent = `${model} on ${where}`;
  drawPlot(doc, chip);
  drawSummary(doc, chip);
  drawTable(doc);
}

// The points of the plot: every operator that does arithmetic, at its intensity and the FLOP/s
// it attains.
function points(doc) {
  const pts = [];
  for (const s of doc.stages) {
    for (const op of s.ops) {
      if (op.flops > 0 && op.arithmetic_intensity > 0 && op.attainable_flops_per_s > 0) {
        pts.push({ stage: s.stage, op });
      }
    }
  }
  return pts;
}

// The roofs: each compute peak the operators run at (and the chip's peak at the activation
// precision), under one memory roof of the chip's bandwidth.
function roofs(doc, chip) {
  const seen = new Map();
  for (const s of doc.stages) {
    for (const op of s.ops) {
      if (op.peak_flops_per_s > 0 && op.compute !== 'link' && !seen.has(op.compute)) {
        seen.set(op.compute, op.peak_flops_per_s);
      }
    }
  }
  const act = doc.stages[0] && doc.stages[0].workload.activation_precision;
  if (chip && act && chip.peak_flops_per_s[act] && ![...seen.values()].includes(chip.peak_flops_per_s[act])) {
    seen.set(act, chip.peak_flops_per_s[act]);
  }
  return [...seen.entries()]
    .map(([label, peak]) => ({ label, peak }))
    .sort((a, b) => b.peak - a.peak);
}

const W = 640, H = 430, M = { left: 70, right: 20, top: 16, bottom: 48 };

function decades(lo, hi) {
  return [Math.floor(Math.log10(lo)), Math.ceil(Math.log10(hi))];
}

// A decade's label: 0.01, 0.1, 1, 10, 100, 1 k, 10 k, …, 1 T, 10 T.
function tickLabel(exp) {
  if (exp < 0) return '0.' + '0'.repeat(-exp - 1) + '1';
  if (exp < 3) return String(Math.pow(10, exp));
  const p = ['k', 'M', 'G', 'T', 'P', 'E'][Math.floor(exp / 3) - 1] || 'e' + exp;
  return String(Math.pow(10, exp % 3)) + ' ' + p;
}

function drawPlot(doc, chip) {
  const box = $('plot');
  box.replaceChildren();
  const pts = points(doc);
  const rf = roofs(doc, chip);
  const bw = chip ? chip.bandwidth_bytes_per_s : null;
  const skipped = doc.stages.reduce((n, s) => n + s.ops.length, 0) - pts.length;
  $('plot-note').textContent = skipped > 0
    ? `${pts.length} operators; ${skipped} without arithmetic (embeddings, copies, collectives) not drawn`
    : `${pts.length} operators`;
  const ais = pts.map((p) => p.op.arithmetic_intensity);
  const ridges = bw ? rf.map((r) => r.peak / bw) : [];
  const fl = pts.map((p) => p.op.attainable_flops_per_s);
  const peaks = rf.map((r) => r.peak);
  if (!ais.length && !ridges.length) return;
  const [x0, x1] = decades(Math.min(...ais, ...ridges) / 2, Math.max(...ais, ...ridges) * 2);
  const [y0, y1] = decades(Math.min(...fl, ...peaks) / 2, Math.max(...fl, ...peaks) * 1.5);
  const pw = W - M.left - M.right, ph = H - M.top - M.bottom;
  const X = (v) => M.left + ((Math.log10(v) - x0) / (x1 - x0)) * pw;
  const Y = (v) => M.top + ph - ((Math.log10(v) - y0) / (y1 - y0)) * ph;
  const s = svg('svg', {
    id: 'roofline', width: W, height: H, viewBox: `0 0 ${W} ${H}`, role: 'img',
    'aria-label': 'roofline plot: attained FLOP/s against arithmetic intensity, log-log',
  });
  for (let e = x0; e <= x1; e++) {
    const x = X(Math.pow(10, e)).toFixed(2);
    const g = svg('g', { class: 'tick x', 'data-value': Math.pow(10, e), 'data-pos': x });
    g.append(svg('line', { class: 'grid', x1: x, x2: x, y1: M.top, y2: M.top + ph }));
    g.append(svg('text', { x, y: M.top + ph + 15, 'text-anchor': 'middle' }, tickLabel(e)));
    s.append(g);
  }
  for (let e = y0; e <= y1; e++) {
    const y = Y(Math.pow(10, e)).toFixed(2);
    const g = svg('g', { class: 'tick y', 'data-value': Math.pow(10, e), 'data-pos': y });
    g.append(svg('line', { class: 'grid', x1: M.left, x2: M.left + pw, y1: y, y2: y }));
    g.append(svg('text', { x: M.left - 6, y: Number(y) + 4, 'text-anchor': 'end' }, tickLabel(e)));
    s.append(g);
  }
  s.append(svg('rect', { class: 'frame', x: M.left, y: M.top, width: pw, height: ph }));
  s.append(svg('text', { class: 'axis-label', x: M.left + pw / 2, y: H - 10, 'text-anchor': 'middle' },
    'Arithmetic intensity (FLOP/byte)'));
  s.append(svg('text', {
    class: 'axis-label', x: 14, y: M.top + ph / 2, 'text-anchor': 'middle',
    transform: `rotate(-90 14 ${M.top + ph / 2})`,
  }, 'Attained performance (FLOP/s)'));
  const clip = svg('clipPath', { id: 'plot-area' });
  clip.append(svg('rect', { x: M.left, y: M.top, width: pw, height: ph }));
  s.append(clip);
  const area = svg('g', { 'clip-path': 'url(#plot-area)' });
  s.append(area);
  if (bw) {
    const xl = Math.pow(10, x0), xr = Math.pow(10, x1);
    rf.forEach((r, i) => {
      const ridge = r.peak / bw;
      const d = `M${X(xl).toFixed(2)},${Y(Math.max(xl * bw, 1e-300)).toFixed(2)} L${X(ridge).toFixed(2)},${Y(r.peak).toFixed(2)} L${X(xr).toFixed(2)},${Y(r.peak).toFixed(2)}`;
      area.append(svg('path', { class: 'roof' + (i ? ' other' : ''), d, 'data-peak': r.peak, 'data-bandwidth': bw }));
      area.append(svg('line', { class: 'ridge', x1: X(ridge), x2: X(ridge), y1: Y(r.peak), y2: M.top + ph }));
      area.append(svg('text', { class: 'roof-label', x: M.left + pw - 4, y: Y(r.peak) - 5, 'text-anchor': 'end' },
        `${r.label}: ${si(r.peak, 'FLOP/s')} (ridge ${sig(ridge)} FLOP/B)`));
    });
    // The memory roof's label, along its slope near the left edge.
    const lx = Math.max(Math.pow(10, x0 + 0.25), Math.pow(10, y0 + 0.5) / bw);
    const ang = (Math.atan2(Y(lx) - Y(lx * 10), X(lx * 10) - X(lx)) * 180) / Math.PI;
    area.append(svg('text', {
      class: 'roof-label', x: X(lx), y: Y(lx * bw) - 6,
      transform: `rotate(${-ang.toFixed(2)} ${X(lx).toFixed(2)} ${(Y(lx * bw) - 6).toFixed(2)})`,
    }, `memory: ${si(bw, 'B/s')}`));
  }
  // Labels for some points: the slowest first, none on top of another.
  const placed = [];
  const byTime = [...pts].sort((a, b) => b.op.time_s - a.op.time_s);
  for (const p of pts) {
    const cx = X(p.op.arithmetic_intensity).toFixed(2);
    const cy = Y(p.op.attainable_flops_per_s).toFixed(2);
    const c = svg('circle', {
      class: `op ${p.stage}`, cx, cy, r: 5,
      'data-op': p.op.name, 'data-stage': p.stage,
      'data-intensity': p.op.arithmetic_intensity, 'data-flops-per-s': p.op.attainable_flops_per_s,
    });
    c.append(svg('title', {}, `${p.op.name} (${p.stage}): ${sig(p.op.arithmetic_intensity)} FLOP/B, ${si(p.op.attainable_flops_per_s, 'FLOP/s')}, ${seconds(p.op.time_s)}, ${p.op.bound}-bound`));
    c.addEventListener('click', () => explain(p.op.name));
    area.append(c);
  }
  for (const p of byTime) {
    const x = X(p.op.arithmetic_intensity) + 7, y = Y(p.op.attainable_flops_per_s) + 14;
    if (placed.some((q) => Math.abs(q[0] - x) < 70 && Math.abs(q[1] - y) < 12)) continue;
    if (x > M.left + pw - 60 || placed.length >= 10) continue;
    placed.push([x, y]);
    area.append(svg('text', { class: 'op-label', x: x.toFixed(2), y: y.toFixed(2) }, p.op.name));
  }
  // The legend, top left: the memory roof leaves that corner empty.
  const stages = [...new Set(pts.map((p) => p.stage))];
  const legend = svg('g', { class: 'legend' });
  legend.append(svg('rect', { x: M.left + 8, y: M.top + 8, width: 78, height: 10 + 16 * stages.length, fill: '#fff', stroke: '#d8dce5' }));
  stages.forEach((st, i) => {
    const ly = M.top + 21 + i * 16;
    legend.append(svg('circle', { class: `key ${st}`, cx: M.left + 20, cy: ly, r: 5 }));
    legend.append(svg('text', { x: M.left + 30, y: ly + 4 }, st));
  });
  s.append(legend);
  box.append(s);
}

function list(entries) {
  const dl = el('dl');
  for (const [k, v] of entries) dl.append(el('dt', {}, k), el('dd', {}, v));
  return dl;
}

function drawSummary(doc, chip) {
  const box = $('summary');
  box.replaceChildren();
  const cards = el('div', { class: 'cards' });
  for (const s of doc.stages) {
    const card = el('div', { class: 'card', 'data-stage': s.stage });
    card.append(el('h3', { class: s.stage }, s.stage));
    const head = doc.headline && doc.headline[s.stage];
    const w = s.workload;
    const rows = [
      ['batch', plain(w.batch)],
      [s.stage === 'prefill' ? 'prompt tokens' : 'context', plain(s.stage === 'prefill' ? w.tokens / w.batch : w.context)],
      ['w / a / kv', `${w.weight_precision} / ${w.activation_precision} / ${w.kv_precision}`],
    ];
    if (head) {
      for (const [k, v] of Object.entries(head)) {
        if (k === 'batch' || k === 'prompt_tokens') continue;
        if (k.endsWith('_per_device') && doc.headline.devices === 1) continue;
        rows.push([words(k), byKey(k, v)]);
      }
    }
    const t = s.totals;
    rows.push(
      ['roofline time', seconds(t.time_s)],
      ['with launches', seconds(t.time_with_launch_s)],
      ['kernels', plain(t.kernels)],
      ['FLOPs', si(t.flops, 'FLOP')],
      ['bytes', bytes(t.bytes)],
      ['intensity', sig(t.arithmetic_intensity) + ' FLOP/B'],
    );
    if (t.communication_s !== undefined) rows.push(['communication', seconds(t.communication_s)]);
    if (s.step_time_s !== undefined) rows.push(['step', seconds(s.step_time_s)]);
    if (s.layout) rows.push(['layout', `tp${s.layout.tp} pp${s.layout.pp} ep${s.layout.ep} cp${s.layout.cp}`]);
    if (s.fusion) {
      rows.push(
        [`fused (${s.fusion.preset})`, seconds(s.fusion.after.time_with_launch_s)],
        ['speed-up', sig(s.fusion.speedup) + '×'],
        ['kernels', `${plain(s.fusion.before.kernels)} → ${plain(s.fusion.after.kernels)}`],
      );
    }
    const dl = list(rows);
    dl.dataset.part = 'totals';
    card.append(dl);
    const m = s.memory;
    const used = m.total_bytes / m.capacity_bytes;
    card.append(el('h3', {}, 'memory' + (s.layout ? ' per device' : '')));
    const bar = el('div', { class: 'bar' + (m.fits_on_chip ? '' : ' over'), title: `${(used * 100).toFixed(1)} % of ${bytes(m.capacity_bytes)}` });
    bar.append(el('div', { style: `width:${Math.min(used, 1) * 100}%` }));
    card.append(bar);
    const mem = list([
      ['weights', bytes(m.weights_bytes)],
      ['KV cache', bytes(m.kv_cache_bytes)],
      ['activations', bytes(m.activation_bytes)],
      ['reserve', bytes(m.reserve_bytes)],
      ['total', bytes(m.total_bytes)],
      ['capacity', bytes(m.capacity_bytes)],
      ['fits', m.fits_on_chip ? 'yes' : 'NO'],
    ]);
    mem.dataset.part = 'memory';
    card.append(mem);
    if (s.warnings && s.warnings.length) {
      card.append(el('ul', { class: 'warnings' }, ...s.warnings.map((x) => el('li', {}, typeof x === 'string' ? x : JSON.stringify(x)))));
    }
    cards.append(card);
  }
  box.append(cards);
  if (chip) {
    box.append(el('p', { class: 'note' },
      `${chip.name}: ${si(chip.bandwidth_bytes_per_s, 'B/s')} memory bandwidth, ${bytes(chip.capacity_bytes)}, ` +
      `launch overhead ${seconds(chip.launch_overhead_s)} per kernel.`));
  }
}

// The operator table: each cell's number as the JSON has it in `data-value`, shown rounded.
const COLUMNS = [
  ['stage', 'stage', (op, s) => s.stage],
  ['operator', 'name', (op) => op.name],
  ['count', 'count', (op) => plain(op.count)],
  ['compute', 'compute', (op) => op.compute],
  ['FLOPs', 'flops', (op) => si(op.flops, 'FLOP')],
  ['bytes', 'bytes', (op) => bytes(op.bytes)],
  ['intensity (FLOP/B)', 'arithmetic_intensity', (op) => sig(op.arithmetic_intensity)],
  ['attained (FLOP/s)', 'attainable_flops_per_s', (op) => si(op.attainable_flops_per_s, '')],
  ['of peak', null, (op) => op.peak_flops_per_s > 0 ? ((100 * op.attainable_flops_per_s) / op.peak_flops_per_s).toFixed(1) + ' %' : '–'],
  ['bound', 'bound', (op) => op.bound],
  ['time', 'time_s', (op) => seconds(op.time_s)],
  ['share', null, (op, s) => s.totals.time_s > 0 ? ((100 * op.time_s) / s.totals.time_s).toFixed(1) + ' %' : '–'],
];

function drawTable(doc) {
  const t = $('ops');
  t.replaceChildren();
  t.append(el('thead', {}, el('tr', {}, ...COLUMNS.map(([h]) => el('th', {}, h)))));
  const body = el('tbody');
  for (const s of doc.stages) {
    for (const op of s.ops) {
      const tr = el('tr', { 'data-op': op.name, 'data-stage': s.stage });
      for (const [, field, show] of COLUMNS) {
        const raw = field === 'stage' ? s.stage : field ? op[field] : null;
        const cls = field === 'stage' ? 'stage-' + s.stage : field === 'bound' ? 'bound-' + op.bound : null;
        tr.append(el('td', { 'data-field': field, 'data-value': raw === null ? null : String(raw), class: cls }, show(op, s)));
      }
      tr.addEventListener('click', () => explain(op.name));
      body.append(tr);
    }
  }
  t.append(body);
}

// ---- start --------------------------------------------------------------------------------

async function upload(file) {
  let config;
  try {
    config = JSON.parse(await file.text());
  } catch (e) {
    showError({ error: `${file.name} is not JSON: ${e.message}`, hint: 'choose a Hugging Face config.json' });
    return;
  }
  if (typeof config !== 'object' || config === null || Array.isArray(config)) {
    showError({ error: `${file.name} is not a JSON object`, hint: 'choose a Hugging Face config.json' });
    return;
  }
  const name = typeof config._name_or_path === 'string' ? config._name_or_path : file.name;
  state.upload = { name, config };
  const sel = $('model');
  let o = [...sel.options].find((x) => x.value === UPLOAD);
  if (!o) {
    o = option(UPLOAD, '');
    sel.prepend(o);
  }
  o.textContent = 'uploaded: ' + name;
  sel.value = UPLOAD;
  update();
}

async function start() {
  for (const id of ['precision', 'weight_precision', 'kv_precision']) {
    if (id !== 'precision') $(id).append(option('', 'as precision'));
    for (const p of PRECISIONS) $(id).append(option(p, p));
  }
  $('precision').value = 'bf16';
  const [models, chips, systems] = await Promise.all([
    call('/api/models'), call('/api/hardware'), call('/api/systems'),
  ]);
  for (const r of [models, chips, systems]) if (!r.ok) showError(r.error);
  if (models.ok) for (const m of models.data.models) $('model').append(option(m.name, m.name));
  if (chips.ok) {
    for (const c of chips.data.hardware) {
      state.chips.set(c.id, c);
      $('hardware').append(option(c.id, c.unusable_reason ? `${c.id} (no roofline)` : c.id));
    }
  }
  if (systems.ok) for (const s of systems.data.systems) $('system').append(option(s.id, `${s.id} (${s.devices} × ${s.chip})`));
  for (const [id, kind, def] of CONTROLS) {
    if (kind === 'check') $(id).checked = def;
    else if ([...($(id).options || [])].some((o) => o.value === def) || kind !== 'select') $(id).value = def;
  }
  readQuery();
  $('controls').addEventListener('change', (e) => {
    if (e.target.id === 'upload') {
      if (e.target.files.length) upload(e.target.files[0]);
      return;
    }
    update();
  });
  $('controls').addEventListener('submit', (e) => e.preventDefault());
  update();
}

start();
