// Loading the website's `_data` files: JSON or YAML, each a list of records.
import fs from 'node:fs/promises';
import path from 'node:path';
import YAML from 'yaml';
import { ImportError } from '../base/import-error.ts';

/** The records of a file, or undefined when an optional file is absent. */
export async function loadList(
  dir: string,
  file: string,
  options: { required?: boolean } = {},
): Promise<unknown[] | undefined> {
  let text: string;
  try {
    text = await fs.readFile(path.join(dir, file), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' && !options.required) return undefined;
    throw new ImportError(file, undefined, `cannot be read: ${(error as Error).message}`);
  }
  const data = file.endsWith('.json') ? parseJson(file, text) : parseYaml(file, text);
  if (!Array.isArray(data)) throw new ImportError(file, undefined, 'must contain a list of records');
  return data;
}

function parseJson(file: string, text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new ImportError(file, undefined, `invalid JSON: ${(error as Error).message}`);
  }
}

function parseYaml(file: string, text: string): unknown {
  // The core schema keeps `2026-06-22` a string (no time-zone guessing); an empty file is an empty list.
  const doc = YAML.parseDocument(text, { schema: 'core', uniqueKeys: true });
  const error = doc.errors[0];
  if (error) throw new ImportError(file, undefined, `invalid YAML: ${error.message}`);
  return doc.toJS() ?? [];
}

/** `#12 "London"`: the record's position in its file (from 1) and what names it. */
export function recordLabel(index: number, raw: unknown, ...fields: string[]): string {
  const value = typeof raw === 'object' && raw !== null ? (raw as Record<string, unknown>) : {};
  const name = fields.map((field) => value[field]).find((v) => typeof v === 'string' && v.trim());
  return name === undefined ? `#${index + 1}` : `#${index + 1} "${String(name).trim()}"`;
}
