import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { geocode, locate, type GeocodeQuery } from './geocode.ts';
import { distanceKm, gazetteer, releaseGazetteer } from './geocode.gazetteer.ts';
import { normalizePlace } from '../../geo/place-names.ts';

/** Asserts the query lands within `km` of the expected point (true coordinates of the place). */
function near(query: GeocodeQuery, latitude: number, longitude: number, km = 15): void {
  const point = geocode(query);
  assert.ok(point, `${JSON.stringify(query)} was not placed`);
  const off = distanceKm(point, { latitude, longitude });
  assert.ok(
    off <= km,
    `${JSON.stringify(query)} placed ${off.toFixed(0)} km away at ${point.latitude},${point.longitude}`,
  );
}

describe('normalizePlace', () => {
  it('ignores accents, case, punctuation and Saint/St. spellings', () => {
    assert.equal(normalizePlace('Goiânia'), 'goiania');
    assert.equal(normalizePlace('Diyarbakır'), 'diyarbakir');
    assert.equal(normalizePlace('St. Louis'), normalizePlace('Saint-Louis'));
    assert.equal(normalizePlace('Washington, D.C.'), normalizePlace('Washington-DC'));
    assert.equal(normalizePlace('Bosnia & Herzegovina'), 'bosnia and herzegovina');
  });
});

describe('geocode', () => {
  it('places cities, largest of the name first, within the given country', () => {
    near({ name: 'London', country: 'United Kingdom' }, 51.507, -0.128);
    near({ name: 'London' }, 51.507, -0.128);
    near({ name: 'Hamilton', country: 'New Zealand' }, -37.787, 175.279);
    near({ name: 'Hamilton', country: 'Canada' }, 43.256, -79.869);
    near({ name: 'Victoria', country: 'Canada' }, 48.428, -123.366);
    near({ name: 'Salvador', country: 'Brazil' }, -12.977, -38.501);
    near({ name: 'Hyderabad', country: 'India' }, 17.385, 78.487);
  });

  it('understands country aliases used by the data', () => {
    near({ name: 'Columbus', country: 'USA' }, 39.961, -82.999);
    near({ name: 'Riyadh', country: 'Kingdom of Saudi Arabia' }, 24.713, 46.675);
    near({ name: 'Seoul', country: 'Korea (South)' }, 37.566, 126.978);
    near({ name: 'Izmir', country: 'Turkiye' }, 38.423, 27.143);
    near({ name: 'Banja Luka', country: 'Bosnia & Herzegovina' }, 44.772, 17.191);
  });

  it('reads qualified names: state names, US state codes, countries', () => {
    near({ name: 'Portland, Maine' }, 43.661, -70.255);
    near({ name: 'Portland', country: 'USA' }, 45.515, -122.679);
    near({ name: 'San Francisco, CA' }, 37.775, -122.419);
    near({ name: 'Atlanta, GA' }, 33.749, -84.388);
    near({ name: 'Vienna, Austria' }, 48.208, 16.374);
    near({ name: 'Newcastle (UK)' }, 54.978, -1.618);
    near({ name: 'Birmingham AL' }, 33.519, -86.81);
    near({ name: 'Minneapolis/St. Paul', country: 'USA' }, 44.978, -93.265);
  });

  it('knows other spellings and regional names', () => {
    near({ name: 'Bangalore', country: 'India' }, 12.972, 77.595);
    near({ name: 'Lisboa', country: 'Portugal' }, 38.722, -9.139);
    near({ name: 'Cologne', country: 'Germany' }, 50.938, 6.96);
    near({ name: 'Dehradun', country: 'India' }, 30.317, 78.032);
    near({ name: 'Washington-DC', country: 'USA' }, 38.907, -77.037);
    near({ name: 'Panama City', country: 'Panama' }, 8.983, -79.517);
    near({ name: 'Bay Area', country: 'USA' }, 37.775, -122.419, 60);
  });

  it('falls back to a state, then to a country', () => {
    assert.equal(locate({ name: 'Delaware', country: 'USA' })?.level, 'region');
    assert.equal(locate({ name: 'Kerala', country: 'India' })?.level, 'region');
    assert.equal(locate({ name: 'Germany', country: 'Germany' })?.level, 'country');
    assert.equal(locate({ name: 'Costa Rica' })?.countryCode, 'CR');
    assert.equal(locate({ name: 'Hong Kong', country: 'China' })?.countryCode, 'HK');
  });

  it('knows the countries and states of geocode.areas.json: centres, names, UK counties', () => {
    // The contiguous United States' centre, not one pulled north-west by Alaska.
    near({ name: 'United States' }, 39.83, -98.58, 100);
    near({ name: 'Kerala', country: 'India' }, 10.5, 76.2, 100);
    assert.equal(locate({ name: 'Worcestershire', country: 'UK' })?.level, 'region');
    assert.equal(locate({ name: 'Worcestershire', country: 'UK' })?.countryCode, 'GB');
    for (const [name, code] of [
      ['Czech Republic', 'CZ'],
      ['Czechia', 'CZ'],
      ['Myanmar', 'MM'],
      ['The Gambia', 'GM'],
      ['Kosovo', 'XK'],
    ])
      assert.equal(locate({ name })?.countryCode, code, name);
    // A state's code is GeoNames' admin-1 code, the cities' own: the Springfield in Illinois, not Missouri's larger one.
    near({ name: 'Springfield, Illinois' }, 39.802, -89.644, 5);
    near({ name: 'Springfield', country: 'USA' }, 37.215, -93.298, 5);
  });

  it('finds the town inside an institution name', () => {
    assert.equal(locate({ name: 'Indian Institute of Technology Bhilai', country: 'India' })?.place, 'Bhilai');
    assert.equal(locate({ name: 'Bahria University Lahore', country: 'Pakistan' })?.place, 'Lahore');
    assert.equal(locate({ name: 'Sri Sairam Engineering College', country: 'India' }), null);
  });

  it('uses a continent to choose among homonyms when the country is unknown', () => {
    near({ name: 'Cali', region: 'South America' }, 3.452, -76.532);
    near({ name: 'Perth', region: 'Oceania' }, -31.952, 115.861);
  });

  it('returns null for what is not a place', () => {
    assert.equal(geocode({ name: 'Virtual' }), null);
    assert.equal(geocode({ name: 'Xyzzy Plugh' }), null);
    assert.equal(geocode({}), null);
    assert.equal(geocode({ name: '   ', country: '' }), null);
  });

  it('builds the gazetteer once per process', () => {
    assert.equal(gazetteer(), gazetteer());
    const started = performance.now();
    for (let i = 0; i < 200; i++)
      geocode({ name: 'Indian Institute of Information Technology Kottayam', country: 'India' });
    assert.ok(performance.now() - started < 1_000, 'lookups are index hits, not scans');
  });
});

describe('releasing the gazetteer (a server lets it go after its first import)', () => {
  it('is built again, whole, by the next use; geocoding answers the same', () => {
    const before = gazetteer();
    const lisbon = geocode({ name: 'Lisbon', country: 'Portugal' });
    assert.ok(lisbon && Math.abs(lisbon.latitude - 38.7) < 0.2, JSON.stringify(lisbon));
    releaseGazetteer();
    const after = gazetteer();
    assert.notEqual(after, before, 'a new one');
    assert.equal(after.cities.size, before.cities.size);
    assert.deepEqual(geocode({ name: 'Lisbon', country: 'Portugal' }), lisbon);
  });
});
