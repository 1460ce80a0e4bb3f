/* global document, fetch */
// The /map page: country outlines from world-atlas (served by us, /static/vendor/), projected with
// d3-geo, and a marker per active chapter and upcoming event from /map/*.geojson. Every marker is
// focusable (Enter or Space selects it, as a click does); the tables below list the same records.
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

/** Every record on the page: { kind, props, lon, lat, marker, row }. */
const records = [];
let selected;

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
  // Drawn last, so the selected marker is on top of its neighbours.
  record.marker.parentNode.appendChild(record.marker);
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

function addMarker(layer, record, projection) {
  const [x, y] = projection([record.lon, record.lat]);
  const attributes = {
    class: `marker marker-${record.kind}`,
    tabindex: 0,
    role: 'button',
    'aria-pressed': 'false',
    'aria-label': label(record),
  };
  const marker =
    record.kind === 'chapter'
      ? svgEl('circle', { ...attributes, cx: x.toFixed(1), cy: y.toFixed(1), r: 4 })
      : svgEl('rect', {
          ...attributes,
          x: (x - 4.5).toFixed(1),
          y: (y - 4.5).toFixed(1),
          width: 9,
          height: 9,
          transform: `rotate(45 ${x.toFixed(1)} ${y.toFixed(1)})`,
        });
  marker.dataset.key = record.props.key;
  const title = svgEl('title');
  title.textContent = record.props.name;
  marker.append(title);
  marker.addEventListener('click', (event) => activate(record, event, false));
  marker.addEventListener('keydown', (event) => {
    if (event.key === 'Enter' || event.key === ' ') activate(record, event, false);
  });
  layer.append(marker);
  record.marker = marker;
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
  svg.append(svgEl('path', { class: 'sphere', d: path({ type: 'Sphere' }), 'aria-hidden': 'true' }));
  svg.append(
    svgEl('path', { class: 'land', d: path(topojson.feature(world, world.objects.countries)), 'aria-hidden': 'true' }),
  );
  const layer = svgEl('g', { class: 'markers' });
  svg.append(layer);

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
  applyFilters();
  svg.setAttribute('aria-busy', 'false');
}

main().catch((error) => {
  status.textContent = `The map could not be loaded (${error.message}). Reload the page to try again.`;
});
