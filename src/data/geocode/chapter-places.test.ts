import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CHAPTER_PLACES, placeChapter } from './chapter-places.ts';
import { countryCode, countryName, countryRegion } from '../../geo/countries.ts';
import { distanceKm } from './geocode.gazetteer.ts';
import { locate } from './geocode.ts';

describe('the reviewed table of chapter places', () => {
  it('places every entry at a city of its country, and names its source', () => {
    for (const [key, place] of Object.entries(CHAPTER_PLACES)) {
      assert.ok(place.source.trim().length > 10, `${key}: a source`);
      assert.ok(countryName(place.country), `${key}: ${place.country} is an ISO code`);
      const found =
        locate({ name: place.city, region: place.region, country: place.country }) ??
        locate({ name: place.city, country: place.country });
      assert.equal(found?.level, 'city', `${key}: ${place.city} at ${found?.level}`);
      assert.equal(found.countryCode, place.country, key);
    }
  });

  it('tells homonyms apart by region: Somerset is the Kentucky one', () => {
    const {
      point,
      countryCode: code,
      country,
      region,
    } = placeChapter({ key: 'somerset', placeNames: ['Somerset'], country: 'USA', region: 'North America' });
    assert.ok(point && distanceKm(point, { latitude: 37.092, longitude: -84.604 }) < 5, JSON.stringify(point));
    assert.deepEqual([code, country, region], ['US', 'United States', 'North America']);
  });

  it('places an institution at its town and fills the country and region the data leaves empty', () => {
    const gitam = placeChapter({ key: 'GITAM', placeNames: ['GITAM'], country: 'India', region: '' });
    assert.ok(gitam.point && distanceKm(gitam.point, { latitude: 17.69, longitude: 83.22 }) < 15, 'Visakhapatnam');
    assert.equal(gitam.region, 'Asia');
    const lucknow = placeChapter({ key: 'lucknow', placeNames: ['Lucknow'], country: '', region: 'Asia' });
    assert.deepEqual([lucknow.countryCode, lucknow.country], ['IN', 'India']);
  });

  it('leaves the gazetteer to place the chapters not in the table, and Virtual nowhere', () => {
    const london = placeChapter({ key: 'london', placeNames: ['London'], country: 'United Kingdom', region: '' });
    assert.ok(london.point && distanceKm(london.point, { latitude: 51.507, longitude: -0.128 }) < 2);
    assert.deepEqual([london.countryCode, london.country, london.region], ['GB', 'United Kingdom', 'Europe']);
    const virtual = placeChapter({ key: 'virtual', placeNames: ['Virtual'], country: '', region: 'Virtual' });
    assert.deepEqual(virtual, { point: null, countryCode: '', country: '', region: 'Virtual' });
    const unknown = placeChapter({ key: 'x', placeNames: ['Nowhere Town'], country: 'Atlantis', region: '' });
    assert.deepEqual([unknown.countryCode, unknown.country], ['', 'Atlantis'], 'an unknown country keeps its text');
  });
});

describe('countries', () => {
  it('reads codes in any case, names, and common spellings', () => {
    for (const text of ['TR', 'tr', 'Turkey', 'Türkiye', 'Turkiye', 'TURKIYE', ' türkiye '])
      assert.equal(countryCode(text), 'TR', text);
    for (const text of ['US', 'USA', 'United States', 'United States of America', 'u.s.a.'])
      assert.equal(countryCode(text), 'US', text);
    for (const text of [
      'GB',
      'UK',
      'United Kingdom',
      'Great Britain',
      'England',
      'Scotland',
      'Wales',
      'Northern Ireland',
    ])
      assert.equal(countryCode(text), 'GB', text);
    for (const text of ['Kingdom of Saudi Arabia', 'KSA', 'Saudi Arabia', 'SA'])
      assert.equal(countryCode(text), 'SA', text);
    assert.equal(countryCode('Korea (South)'), 'KR');
    assert.equal(countryCode('Bosnia & Herzegovina'), 'BA');
    assert.equal(countryCode('Czech Republic'), 'CZ');
  });

  it('knows no continent, withdrawn code or empty text as a country', () => {
    for (const text of ['', '  ', 'Africa', 'Europe', 'Virtual', 'SU', 'YU', 'EU', 'ZZ', 'Atlantis', 'T'])
      assert.equal(countryCode(text), undefined, text);
  });

  it('gives one canonical name and the website region of a code', () => {
    assert.equal(countryName('TR'), 'Türkiye');
    assert.equal(countryName('US'), 'United States');
    assert.equal(countryName('HK'), 'Hong Kong');
    assert.equal(countryName('QQ'), '');
    assert.deepEqual(['IN', 'DE', 'US', 'BR', 'GT', 'NG', 'NZ'].map(countryRegion), [
      'Asia',
      'Europe',
      'North America',
      'South America',
      'Central America',
      'Africa',
      'Oceania',
    ]);
  });
});
