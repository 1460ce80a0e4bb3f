// GET /map: the active chapters and upcoming events on a world map (drawn by /static/map.js from
// /map/chapters.geojson and /map/events.geojson), with the same records as tables below it, and the link to the
// events' calendar feed (/calendar/events.ics).
import { layout } from './layout.ts';

export const MAP_SCRIPTS = [
  '/static/vendor/d3-array.min.js',
  '/static/vendor/d3-geo.min.js',
  '/static/vendor/topojson-client.min.js',
  '/static/map.js',
];

export function mapPage(): string {
  return layout({
    title: 'Chapters and events on a map · OWASP community data',
    current: 'map',
    scripts: MAP_SCRIPTS,
    main: `
<h1>Chapters and events on a map</h1>
<p class="lead">The active OWASP chapters and the upcoming events that have a place. Select a marker or a name for the
record and its API detail; the same records are listed in the tables below the map.</p>
<p class="hint" id="calendar-hint">The events in your calendar application: <a href="/calendar/events.ics">subscribe to the
OWASP events calendar</a> (iCalendar; give the link to your application's "subscribe" or "add calendar from URL" to
keep it up to date; no API key needed).</p>

<form class="map-filters" id="map-filters" aria-label="Filter the map">
  <div class="field">
    <label for="filter-region">Region</label>
    <select id="filter-region" name="region"><option value="">All regions</option></select>
  </div>
  <div class="field">
    <label for="filter-country">Country</label>
    <select id="filter-country" name="country"><option value="">All countries</option></select>
  </div>
  <fieldset class="field">
    <legend>Show</legend>
    <label class="check"><input type="checkbox" id="show-chapters" checked> Chapters</label>
    <label class="check"><input type="checkbox" id="show-events" checked> Upcoming events</label>
  </fieldset>
</form>
<p class="hint" id="filter-hint">Region and country apply to chapters. Events carry no country or region in the data, so they are
hidden while a region or country is chosen.</p>
<p id="map-status" class="map-status" role="status">Loading the map…</p>

<div class="map-layout">
  <div class="map-frame">
    <a class="skip-markers" href="#map-lists">Skip the markers to the lists</a>
    <div class="map-zoom" role="group" aria-label="Zoom">
      <button type="button" id="zoom-in" aria-label="Zoom in">+</button>
      <button type="button" id="zoom-out" aria-label="Zoom out">−</button>
      <button type="button" id="zoom-reset">Whole world</button>
      <span id="zoom-level" class="zoom-level" aria-live="polite">100 %</span>
    </div>
    <svg id="map" class="map" viewBox="0 0 960 500" role="group" aria-labelledby="map-title" aria-describedby="map-help">
      <title id="map-title">World map of chapters and upcoming events</title>
    </svg>
    <p id="map-help" class="hint">Markers: <span class="key key-chapter" aria-hidden="true"></span> chapter,
    <span class="key key-event" aria-hidden="true"></span> upcoming event. Tab to a marker and press Enter or Space to
    show it. Zoom with the wheel, two fingers, the buttons or + and −; drag or use the arrow keys to move.</p>
  </div>
  <section id="map-detail" class="card map-detail" aria-labelledby="detail-title" tabindex="-1">
    <h2 id="detail-title">Selected record</h2>
    <div id="detail-body"><p>Nothing selected yet.</p></div>
  </section>
</div>

<section id="map-lists" class="map-lists" aria-label="The records on the map" tabindex="-1">
  <h2 id="chapters-title">Chapters <span class="count" id="chapters-count"></span></h2>
  <table class="records" aria-labelledby="chapters-title">
    <thead><tr><th scope="col">Chapter</th><th scope="col">Country</th><th scope="col">Region</th></tr></thead>
    <tbody id="chapter-rows"></tbody>
  </table>
  <h2 id="events-title">Upcoming events <span class="count" id="events-count"></span></h2>
  <table class="records" aria-labelledby="events-title">
    <thead><tr><th scope="col">Event</th><th scope="col">Dates</th></tr></thead>
    <tbody id="event-rows"></tbody>
  </table>
</section>
<noscript><p>The map and its lists are drawn by JavaScript. The data is at
<a href="/map/chapters.geojson">/map/chapters.geojson</a> and <a href="/map/events.geojson">/map/events.geojson</a>, the events
also as a calendar at <a href="/calendar/events.ics">/calendar/events.ics</a>.</p></noscript>`,
  });
}
