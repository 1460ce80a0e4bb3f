/* global document, fetch, DOMPoint */
// The /map page: country outlines from world-atlas (served by us, /static/vendor/), projected with
// d3-geo, and a marker per active chapter and upcoming event from /map/*.geojson. Every marker is
// focusable (Enter or Space selects it, as a click does); the tables below list the same records.
// Zoom and pan with the wheel, a drag, two fingers, the buttons or the keyboard (+, −, arrows, 0): the outlines are
// scaled, the markers keep their size and are moved to their places. Selecting a marker never moves it in the
// document (the keyboard focus stays on it): rings drawn above every marker show the selected and the focused one.
// Loaded after the d3-array, d3-geo and topojson-client scripts, which define the globals d3 and topojson.
const { d3, topojson } = globalThis;
const SVG = 'http://www.w3.org/2000/svg';
const WIDTH = 960;
const HEIGHT = 500;

const $ = (id) => document.getElementById(id);
const svg = $('map');
const status = $('map-status');
const regionSelect = $('filter-region');
const countrySelect = $('filter-country');
const showChapters = $('show-chapters');
const showEvents = $('show-events');

/** Every record on the page: { kind, props, lon, lat, x, y (projected, unzoomed), marker, row }. */
const records = [];
let selected;
/** The view: screen = projected × k + (x, y). */
const view = { k: 1, x: 0, y: 0 };
const MAX_ZOOM = 16;
let outlines;
let selectionRing;
let focusRing;

function el(name, attributes = {}, text) {
  const node = document.createElement(name);
  for (const [key, value] of Object.entries(attributes)) node.setAttribute(key, value);
  if (text !== undefined) node.textContent = text;
  return node;
}

function svgEl(name, attributes = {}) {
  const node = document.createElementNS(SVG, name);
  for (const [key, value] of Object.entries(attributes)) node.setAttribute(key, String(value));
  return node;
}

async function getJson(url) {
  const response = await fetch(url, {
    headers: { accept: url.endsWith('.geojson') ? 'application/geo+json' : 'application/json' },
  });
  if (!response.ok) throw new Error(`${url}: ${response.status}`);
  return response.json();
}

function dates(props) {
  return props.end_date && props.end_date !== props.start_date
    ? `${props.start_date} to ${props.end_date}`
    : props.start_date;
}

function label(record) {
  const p = record.props;
  return record.kind === 'chapter'
    ? `Chapter: ${p.name}, ${p.country || 'country unknown'}`
    : `Event: ${p.name}, ${dates(p)}`;
}

function apiPath(record) {
  return `/api/v0/${record.kind === 'chapter' ? 'chapters' : 'events'}/${encodeURIComponent(record.props.key)}`;
}

function showDetail(record, { focusPanel = false } = {}) {
  if (selected) {
    selected.marker.classList.remove('selected');
    selected.row.classList.remove('selected');
    selected.marker.setAttribute('aria-pressed', 'false');
  }
  selected = record;
  record.marker.classList.add('selected');
  record.marker.setAttribute('aria-pressed', 'true');
  record.row.classList.add('selected');
  // A ring above every marker instead of moving this one to the end: moving a focused element drops the focus.
  placeRing(selectionRing, record);
  const p = record.props;
  const body = $('detail-body');
  body.replaceChildren();
  body.append(el('h3', {}, p.name));
  const list = el('dl');
  const add = (term, value) => list.append(el('dt', {}, term), el('dd', {}, value));
  add('Kind', record.kind === 'chapter' ? 'Chapter' : 'Upcoming event');
  if (record.kind === 'chapter') {
    add('Country', p.country || '—');
    add('Region', p.region || '—');
  } else {
    add('Dates', dates(p));
  }
  add('Place', `${p.latitude.toFixed(4)}, ${p.longitude.toFixed(4)}`);
  body.append(list);
  const links = el('p');
  const api = el('a', { href: apiPath(record) }, `API record: ${apiPath(record)}`);
  links.append(api);
  if (record.kind === 'event' && /^https?:\/\//.test(p.url)) {
    links.append(el('br'), el('a', { href: p.url, rel: 'noopener' }, 'Event page'));
  }
  body.append(links);
  if (focusPanel) $('map-detail').focus();
}

function activate(record, event, focusPanel) {
  event.preventDefault();
  showDetail(record, { focusPanel });
}

/** Where a record is drawn in the current view. */
function screen(record) {
  return [record.x * view.k + view.x, record.y * view.k + view.y];
}

function placeMarker(record) {
  const [x, y] = screen(record).map((v) => v.toFixed(1));
  const marker = record.marker;
  if (record.kind === 'chapter') {
    marker.setAttribute('cx', x);
    marker.setAttribute('cy', y);
  } else {
    marker.setAttribute('x', (Number(x) - 4.5).toFixed(1));
    marker.setAttribute('y', (Number(y) - 4.5).toFixed(1));
    marker.setAttribute('transform', `rotate(45 ${x} ${y})`);
  }
}

function placeRing(ring, record) {
  if (!record || record.marker.style.display === 'none') {
    ring.setAttribute('visibility', 'hidden');
    return;
  }
  const [x, y] = screen(record);
  ring.setAttribute('cx', x.toFixed(1));
  ring.setAttribute('cy', y.toFixed(1));
  ring.setAttribute('visibility', 'visible');
}

function addMarker(layer, record, projection) {
  [record.x, record.y] = projection([record.lon, record.lat]);
  const attributes = {
    class: `marker marker-${record.kind}`,
    tabindex: 0,
    role: 'button',
    'aria-pressed': 'false',
    'aria-label': label(record),
  };
  const marker =
    record.kind === 'chapter'
      ? svgEl('circle', { ...attributes, r: 4 })
      : svgEl('rect', { ...attributes, width: 9, height: 9 });
  record.marker = marker;
  placeMarker(record);
  marker.dataset.key = record.props.key;
  const title = svgEl('title');
  title.textContent = record.props.name;
  marker.append(title);
  marker.addEventListener('click', (event) => activate(record, event, false));
  marker.addEventListener('keydown', (event) => {
    if (event.key === 'Enter' || event.key === ' ') activate(record, event, false);
  });
  // The focus ring: a marker is too small for an outline to be seen; drawn only for the keyboard's focus.
  marker.addEventListener('focus', () => {
    if (marker.matches(':focus-visible')) placeRing(focusRing, record);
  });
  marker.addEventListener('blur', () => focusRing.setAttribute('visibility', 'hidden'));
  layer.append(marker);
}

/** Sets the view (zoom k around nothing: the caller gives the translation), kept inside the map, and redraws. */
function setView(k, x, y) {
  view.k = Math.min(MAX_ZOOM, Math.max(1, k));
  view.x = Math.min(0, Math.max(WIDTH * (1 - view.k), x));
  view.y = Math.min(0, Math.max(HEIGHT * (1 - view.k), y));
  outlines.setAttribute(
    'transform',
    `translate(${view.x.toFixed(2)} ${view.y.toFixed(2)}) scale(${view.k.toFixed(4)})`,
  );
  for (const record of records) placeMarker(record);
  placeRing(selectionRing, selected);
  const focused = records.find((r) => r.marker === document.activeElement);
  if (focused && focusRing.getAttribute('visibility') === 'visible') placeRing(focusRing, focused);
  svg.dataset.zoom = view.k.toFixed(2);
  $('zoom-level').textContent = `${Math.round(view.k * 100)} %`;
}

/** Zooms by `factor` keeping the map's point under (px, py) where it is. */
function zoomAt(factor, px = WIDTH / 2, py = HEIGHT / 2) {
  const k = Math.min(MAX_ZOOM, Math.max(1, view.k * factor));
  const ratio = k / view.k;
  setView(k, px - (px - view.x) * ratio, py - (py - view.y) * ratio);
}

function panBy(dx, dy) {
  setView(view.k, view.x + dx, view.y + dy);
}

/** A pointer's position in the map's own units (its viewBox), whatever size the page draws it. */
function mapPoint(event) {
  const matrix = svg.getScreenCTM().inverse();
  const point = new DOMPoint(event.clientX, event.clientY).matrixTransform(matrix);
  return [point.x, point.y];
}

function enableZoom() {
  $('zoom-in').addEventListener('click', () => zoomAt(2));
  $('zoom-out').addEventListener('click', () => zoomAt(0.5));
  $('zoom-reset').addEventListener('click', () => setView(1, 0, 0));
  svg.addEventListener(
    'wheel',
    (event) => {
      event.preventDefault();
      zoomAt(Math.exp(-event.deltaY / 300), ...mapPoint(event));
    },
    { passive: false },
  );
  // Keys on the map or on a marker: + and − zoom, the arrows pan, 0 resets.
  svg.addEventListener('keydown', (event) => {
    const step = 60;
    const moves = { ArrowLeft: [step, 0], ArrowRight: [-step, 0], ArrowUp: [0, step], ArrowDown: [0, -step] };
    if (event.key === '+' || event.key === '=') zoomAt(2);
    else if (event.key === '-' || event.key === '_') zoomAt(0.5);
    else if (event.key === '0') setView(1, 0, 0);
    else if (moves[event.key]) panBy(...moves[event.key]);
    else return;
    event.preventDefault();
  });
  // A drag pans (one pointer, mouse or finger); two fingers pinch to zoom. A drag that starts on a marker pans too,
  // and does not select it.
  const pointers = new Map();
  let dragged = false;
  svg.addEventListener('pointerdown', (event) => {
    pointers.set(event.pointerId, mapPoint(event));
    dragged = false;
  });
  svg.addEventListener('pointermove', (event) => {
    const before = pointers.get(event.pointerId);
    if (!before) return;
    const now = mapPoint(event);
    if (pointers.size === 1) {
      if (!dragged && Math.hypot(now[0] - before[0], now[1] - before[1]) < 4) return;
      if (!dragged) svg.setPointerCapture(event.pointerId);
      dragged = true;
      panBy(now[0] - before[0], now[1] - before[1]);
    } else if (pointers.size === 2) {
      const other = [...pointers].find(([id]) => id !== event.pointerId)[1];
      const spread = (a) => Math.hypot(a[0] - other[0], a[1] - other[1]);
      if (spread(before) > 0) zoomAt(spread(now) / spread(before), (now[0] + other[0]) / 2, (now[1] + other[1]) / 2);
      dragged = true;
    }
    pointers.set(event.pointerId, now);
  });
  const release = (event) => pointers.delete(event.pointerId);
  svg.addEventListener('pointerup', release);
  svg.addEventListener('pointercancel', release);
  // The click that ends a drag selects nothing.
  svg.addEventListener(
    'click',
    (event) => {
      if (dragged) event.stopPropagation();
      dragged = false;
    },
    true,
  );
}

function addRow(tbody, record) {
  const row = el('tr');
  const head = el('th', { scope: 'row' });
  const button = el(
    'button',
    { type: 'button', class: 'link-button', 'data-key': record.props.key },
    record.props.name,
  );
  // A button: Enter and Space select it natively.
  button.addEventListener('click', (event) => activate(record, event, true));
  head.append(button);
  row.append(head);
  if (record.kind === 'chapter')
    row.append(el('td', {}, record.props.country || '—'), el('td', {}, record.props.region || '—'));
  else row.append(el('td', {}, dates(record.props)));
  tbody.append(row);
  record.row = row;
}

function fillSelect(select, values, keep) {
  const current = keep ? select.value : '';
  select.replaceChildren(select.options[0]);
  for (const [value, text] of values) select.append(el('option', { value }, text));
  select.value = values.some(([value]) => value === current) ? current : '';
}

function countryOptions() {
  const region = regionSelect.value;
  const names = new Map();
  for (const r of records) {
    if (r.kind === 'chapter' && r.props.country_code && (!region || r.props.region === region))
      names.set(r.props.country_code, r.props.country);
  }
  return [...names].sort((a, b) => a[1].localeCompare(b[1], 'en'));
}

function applyFilters() {
  const region = regionSelect.value;
  const country = countrySelect.value;
  const filtered = Boolean(region || country);
  let chapters = 0;
  let events = 0;
  for (const r of records) {
    const visible =
      r.kind === 'chapter'
        ? showChapters.checked &&
          (!region || r.props.region === region) &&
          (!country || r.props.country_code === country)
        : showEvents.checked && !filtered;
    r.marker.style.display = visible ? '' : 'none';
    r.row.hidden = !visible;
    if (visible && r.kind === 'chapter') chapters++;
    if (visible && r.kind === 'event') events++;
  }
  placeRing(selectionRing, selected);
  $('chapters-count').textContent = `(${chapters})`;
  $('events-count').textContent = `(${events})`;
  const where = [country && countrySelect.selectedOptions[0].textContent, region].filter(Boolean).join(', ');
  status.textContent = `Showing ${chapters} ${chapters === 1 ? 'chapter' : 'chapters'}${where ? ` in ${where}` : ''} and ${events} upcoming ${events === 1 ? 'event' : 'events'}.`;
}

async function main() {
  const [world, chapters, events] = await Promise.all([
    getJson('/static/vendor/countries-110m.json'),
    getJson('/map/chapters.geojson'),
    getJson('/map/events.geojson'),
  ]);
  const projection = d3.geoNaturalEarth1().fitExtent(
    [
      [8, 8],
      [WIDTH - 8, HEIGHT - 8],
    ],
    { type: 'Sphere' },
  );
  const path = d3.geoPath(projection);
  outlines = svgEl('g', { class: 'outlines', 'aria-hidden': 'true' });
  outlines.append(
    svgEl('path', { class: 'sphere', d: path({ type: 'Sphere' }) }),
    svgEl('path', { class: 'land', d: path(topojson.feature(world, world.objects.countries)) }),
  );
  svg.append(outlines);
  const layer = svgEl('g', { class: 'markers' });
  selectionRing = svgEl('circle', { class: 'ring ring-selected', r: 9, visibility: 'hidden', 'aria-hidden': 'true' });
  focusRing = svgEl('circle', { class: 'ring ring-focus', r: 11, visibility: 'hidden', 'aria-hidden': 'true' });
  svg.append(layer, selectionRing, focusRing);

  for (const [kind, collection, tbody] of [
    ['chapter', chapters, $('chapter-rows')],
    ['event', events, $('event-rows')],
  ]) {
    for (const feature of collection.features) {
      const [lon, lat] = feature.geometry.coordinates;
      const record = { kind, props: feature.properties, lon, lat };
      addMarker(layer, record, projection);
      addRow(tbody, record);
      records.push(record);
    }
  }
  const regions = [
    ...new Set(records.filter((r) => r.kind === 'chapter' && r.props.region).map((r) => r.props.region)),
  ].sort();
  fillSelect(
    regionSelect,
    regions.map((r) => [r, r]),
    false,
  );
  fillSelect(countrySelect, countryOptions(), false);
  regionSelect.addEventListener('change', () => {
    fillSelect(countrySelect, countryOptions(), true);
    applyFilters();
  });
  for (const control of [countrySelect, showChapters, showEvents]) control.addEventListener('change', applyFilters);
  $('map-filters').addEventListener('submit', (event) => event.preventDefault());
  enableZoom();
  setView(1, 0, 0);
  applyFilters();
  svg.setAttribute('aria-busy', 'false');
}

main().catch((error) => {
  status.textContent = `The map could not be loaded (${error.message}). Reload the page to try again.`;
});
