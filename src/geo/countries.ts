// Countries as ISO 3166-1 alpha-2 codes, with one canonical English name each (CLDR's, through the
// runtime's Intl) and the continent the website's data uses as a chapter's region. Light on purpose:
// the API resolves `?country=` with it, so it must not load the gazetteer.
import { COUNTRY_ALIASES, normalizePlace } from './place-names.ts';

// CLDR's long names where a shorter one is the common name.
const NAME_OVERRIDES: Record<string, string> = { HK: 'Hong Kong', MO: 'Macao', PS: 'Palestine' };

// The regions of chapters.json (continents, with Central America apart) of every ISO 3166-1 code plus
// Kosovo's XK. Also the list of what counts as a country: CLDR names more (the EU, Ascension Island,
// withdrawn codes such as SU or YU).
const REGION_CODES: Record<string, string> = {
  Africa:
    'DZ AO BJ BW BF BI CV CM CF TD KM CG CD CI DJ EG GQ ER SZ ET GA GM GH GN GW KE LS LR LY MG MW ML MR MU YT MA MZ ' +
    'NA NE NG RE RW SH ST SN SC SL SO ZA SS SD TZ TG TN UG EH ZM ZW',
  Asia:
    'AF AM AZ BH BD BT BN KH CN CY GE HK IN ID IR IQ IL JP JO KZ KW KG LA LB MO MY MV MN MM NP KP OM PK PS PH QA SA SG ' +
    'KR LK SY TW TJ TH TL TR TM AE UZ VN YE IO CC CX',
  Europe:
    'AD AL AT AX BA BE BG BY CH CZ DE DK EE ES FI FO FR GB GG GI GR HR HU IE IM IS IT JE LI LT LU LV MC MD ME MK MT NL ' +
    'NO PL PT RO RS RU SE SI SJ SK SM UA VA XK',
  'North America':
    'AG AI AW BB BL BM BQ BS CA CU CW DM DO GD GL GP HT JM KN KY LC MF MQ MS MX PM PR SX TC TT US VC VG VI UM',
  'Central America': 'BZ CR GT HN NI PA SV',
  'South America': 'AR BO BR CL CO EC FK GF GY PE PY SR UY VE GS',
  Oceania: 'AS AU CK FJ FM GU KI MH MP NC NF NR NU NZ PF PG PN PW SB TK TO TV VU WF WS',
  Antarctica: 'AQ BV HM TF',
};

// Spellings met in the data or in queries that CLDR's English names do not cover (normalized → code).
// Scotland, England, Wales and Northern Ireland are parts of the United Kingdom: ISO 3166-1 has one code, GB.
const MORE_ALIASES: Record<string, string> = {
  turkey: 'TR',
  'republic of turkiye': 'TR',
  'czech republic': 'CZ',
  macedonia: 'MK',
  'hong kong sar china': 'HK',
  'macao sar china': 'MO',
  'south korea': 'KR',
  'cote d ivoire': 'CI',
  'bosnia herzegovina': 'BA',
  'vatican city': 'VA',
  burma: 'MM',
  swaziland: 'SZ',
  'cape verde': 'CV',
  'east timor': 'TL',
  'palestinian territories': 'PS',
  'united states of america': 'US',
  america: 'US',
  'u s a': 'US',
  'u s': 'US',
};

interface CountryTables {
  names: Map<string, string>;
  byName: Map<string, string>;
  regions: Map<string, string>;
}

let tables: CountryTables | undefined;

function load(): CountryTables {
  const display = new Intl.DisplayNames(['en'], { type: 'region', fallback: 'none' });
  const regions = new Map<string, string>();
  for (const [region, codes] of Object.entries(REGION_CODES))
    for (const code of codes.split(' ')) regions.set(code, region);
  const names = new Map<string, string>();
  const byName = new Map<string, string>();
  for (const code of regions.keys()) {
    const name = NAME_OVERRIDES[code] ?? display.of(code) ?? code;
    names.set(code, name);
    byName.set(normalizePlace(name), code);
    const cldr = display.of(code);
    if (cldr) byName.set(normalizePlace(cldr), code);
  }
  for (const [alias, code] of Object.entries({ ...COUNTRY_ALIASES, ...MORE_ALIASES })) {
    if (names.has(code) && !byName.has(alias)) byName.set(alias, code);
  }
  return { names, byName, regions };
}

function countryTables(): CountryTables {
  tables ??= load();
  return tables;
}

/**
 * The ISO 3166-1 alpha-2 code of a country named by its code in any case ("TR", "tr"), its English
 * name, or a common other spelling, accents and punctuation aside ("Türkiye", "Turkiye", "Turkey";
 * "USA", "United States of America"; "UK", "Great Britain", "Scotland"). Undefined when unknown.
 */
export function countryCode(text: string | undefined): string | undefined {
  const trimmed = text?.trim() ?? '';
  if (!trimmed) return undefined;
  const { names, byName } = countryTables();
  if (/^[A-Za-z]{2}$/.test(trimmed) && names.has(trimmed.toUpperCase())) {
    // "UK" is no ISO code (it is reserved), but it is the common abbreviation of GB: names win there.
    return byName.get(normalizePlace(trimmed)) ?? trimmed.toUpperCase();
  }
  return byName.get(normalizePlace(trimmed));
}

/** The canonical English name of a code ("TR" → "Türkiye"); '' for an unknown code. */
export function countryName(code: string): string {
  return countryTables().names.get(code) ?? '';
}

/** The continent of a country, in the website's words ("Asia", "North America", "Central America"…). */
export function countryRegion(code: string): string {
  return countryTables().regions.get(code) ?? '';
}
