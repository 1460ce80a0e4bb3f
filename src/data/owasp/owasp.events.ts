// events.yml: groups of events by category, each event with a start date and its dates as text.
import type { EventCategory } from '../../db/schema.ts';
import { recordLabel } from './owasp.files.ts';
import { RecordFields, calendarDay, monthNumber, slugify } from './owasp.fields.ts';
import type { EventRecord } from './owasp.types.ts';

const FILE = 'events.yml';

export function readEvents(groups: unknown[]): EventRecord[] {
  const events: EventRecord[] = [];
  const keys = new Set<string>();
  groups.forEach((rawGroup, groupIndex) => {
    const group = new RecordFields(FILE, `group ${recordLabel(groupIndex, rawGroup, 'category')}`, rawGroup);
    const category = eventCategory(group.string('category'));
    const list = group.raw.events ?? [];
    if (!Array.isArray(list)) return group.fail('field "events" must be a list');
    list.forEach((raw: unknown, index: number) => {
      const fields = new RecordFields(FILE, `${group.record} event ${recordLabel(index, raw, 'name')}`, raw);
      const name = fields.required('name');
      const startDate = fields.day('start-date');
      const summary = fields.string('dates');
      const endDate = endDateOf(summary, startDate);
      if (endDate && endDate < startDate) fields.fail(`dates "${summary}" end before start-date ${startDate}`);
      // Two events of the same name get -2, -3, … in file order, so keys are stable between runs.
      const base = slugify(name) || 'event';
      let key = base;
      for (let n = 2; keys.has(key); n++) key = `${base}-${n}`;
      keys.add(key);
      events.push({
        key,
        name,
        description: fields.text('optional-text'),
        summary,
        category,
        startDate,
        endDate,
        url: fields.string('url'),
        suggestedLocation: locationOf(name),
      });
    });
  });
  return events;
}

export function eventCategory(text: string): EventCategory {
  const category = text.trim().toLowerCase();
  if (category === 'global') return 'global';
  if (category === 'appsec days') return 'appsec_days';
  if (category.includes('partner')) return 'partner';
  return 'other';
}

const DATE_RANGE =
  /^([A-Za-z]+\.?)\s+(\d{1,2})(?:,?\s+(\d{4}))?\s*[-–—]\s*(?:([A-Za-z]+\.?)\s+)?(\d{1,2}),?\s+(\d{4})$/;
const SINGLE_DATE = /^([A-Za-z]+\.?)\s+(\d{1,2}),?\s+(\d{4})$/;

/**
 * The last day of "June 22-26, 2026", "November 30 - December 2, 2026" or
 * "December 30, 2026 - January 2, 2027"; null when the text is one day equal to the start, or unreadable.
 */
export function endDateOf(dates: string, startDate: string): string | null {
  const text = dates.trim();
  const range = DATE_RANGE.exec(text);
  const single = range ? undefined : SINGLE_DATE.exec(text);
  let end: string | undefined;
  if (range) end = calendarDay(Number(range[6]), monthNumber(range[4] ?? range[1]!), Number(range[5]));
  else if (single) end = calendarDay(Number(single[3]), monthNumber(single[1]!), Number(single[2]));
  return end && end !== startDate ? end : null;
}

/** "OWASP Global AppSec EU 2026 - Vienna, Austria" → "Vienna, Austria"; '' without a place or when virtual. */
export function locationOf(name: string): string {
  const match = /\s[-–—]\s+([^-–—]+)$/.exec(name);
  const place = match?.[1]?.trim() ?? '';
  if (!/\p{L}/u.test(place) || /^(virtual|online|remote)$/i.test(place)) return '';
  return place;
}
