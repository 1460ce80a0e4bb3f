// Text the website's page templates ship with and leaders never replaced. Found by counting the most
// frequent values of each field in the bundled files (e.g. "More info soon..." is the pitch of 1,235
// records, "Needs Website Update" the region of 425); stored as '' so they never show as content.
const PLACEHOLDERS = [
  'More info soon...',
  'A very brief, one-line description of your project',
  'A very brief, one-line description of your chapter',
  'A very brief, one-line description of your committee',
  'A very brief, one-line description of your event',
  'This is an example of a Project or Chapter Page.',
  'OWASP Project and Chapter Example',
  'Needs Website Update',
  'Unknown',
  // A template's front matter that leaked into the level and type fields of older records.
  'layout: col-sidebar',
  'ayout: col-sidebar',
  // The template's page type.
  'example',
];

const KNOWN = new Set(PLACEHOLDERS.map(comparable));

function comparable(text: string): string {
  return text.trim().replace(/\s+/g, ' ').toLowerCase();
}

export function isPlaceholder(text: string): boolean {
  return KNOWN.has(comparable(text));
}

/** The text trimmed, or '' when it is a template placeholder. */
export function cleanText(text: string): string {
  const trimmed = text.trim();
  return isPlaceholder(trimmed) ? '' : trimmed;
}
