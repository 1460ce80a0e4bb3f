// Free-text place names → the names to look up, each with what narrows it (country, state).
import type { Country, Region } from './geocode.gazetteer.ts';
import { findCountry, resolveCountry, resolveRegion, type Scope } from './geocode.match.ts';
import { normalizePlace } from '../../geo/place-names.ts';
import { NON_PLACE_WORDS } from './geocode.names.ts';

export interface Candidate {
  /** A normalized name. */
  key: string;
  scope: Scope;
}

const NOT_A_PLACE = new Set(['virtual', 'online', 'remote', 'global', 'worldwide', 'tbd', 'tba']);

/**
 * "Minneapolis/St. Paul" names two places, tried in order. In "Newcastle (UK)", "Portland, Maine",
 * "Atlanta, GA" or "College of Engineering, Mysuru" the parts after the first narrow the place down
 * or are the place itself; "Birmingham AL" ends with a US state code.
 */
export function parsePlace(text: string, base: Scope): Candidate[] {
  const out: Candidate[] = [];
  const add = (name: string, scope: Scope) => {
    const key = normalizePlace(name);
    if (key && !NOT_A_PLACE.has(key)) out.push({ key, scope });
  };
  for (const alternative of text.split('/')) {
    const [main, ...rest] = alternative
      .split(/[,()]/)
      .map((part) => part.trim())
      .filter(Boolean);
    if (!main) continue;
    let country: Country | undefined;
    let region: Region | undefined;
    const places: string[] = [];
    for (const part of rest) {
      const found = qualifier(part, country ?? base.country);
      if (found && 'zones' in found) country ??= found;
      else if (found) region ??= found;
      else places.push(part);
    }
    country ??= region ? resolveCountry(region.country) : base.country;
    const scope: Scope = { country, region: region ?? base.region, zones: country ? undefined : base.zones };
    for (const name of [...places, main]) add(name, scope);
    const trailing = /^(.*\S)\s+([A-Z]{2})$/.exec(main);
    const state = trailing && !region ? resolveRegion(trailing[2]!, country) : undefined;
    if (trailing && state) add(trailing[1]!, { country: resolveCountry(state.country), region: state });
  }
  return out;
}

// "CA" after a city is California, not Canada; "Luxembourg" is the country, not the Belgian province.
function qualifier(part: string, country: Country | undefined): Country | Region | undefined {
  const byName = () => findCountry(normalizePlace(part));
  if (/^[A-Z]{2}$/.test(part)) return resolveRegion(part, country) ?? byName();
  return byName() ?? resolveRegion(part, country);
}

/** Runs of words inside a longer name, longest first and, at equal length, the last first. */
export function innerNames(key: string): string[] {
  const words = key.split(' ');
  const grams: string[] = [];
  for (let size = words.length - 1; size >= 1; size--) {
    for (let start = words.length - size; start >= 0; start--) {
      const gram = words.slice(start, start + size);
      if (gram.every((word) => NON_PLACE_WORDS.has(word)) || (size === 1 && gram[0]!.length < 3)) continue;
      grams.push(gram.join(' '));
    }
  }
  return grams;
}
