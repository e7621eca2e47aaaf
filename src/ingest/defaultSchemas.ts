import fs from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from '../paths.js';
import { fieldMapFromPaths, overlayFieldMaps, type FieldMap } from '../sources/schema.js';
import { normaliseEvents } from './normalise.js';

/** Fields current Supabase logs carry, by source (seeds/source-fields.json: the dashboard's queries and the stack's shipper configuration). */
const KNOWN_FIELDS: Readonly<Record<string, Readonly<Record<string, string>>>> = JSON.parse(
  fs.readFileSync(path.join(PROJECT_ROOT, 'seeds', 'source-fields.json'), 'utf8'),
);

/**
 * The schema a default source starts with: inferred from its sample event in seeds/fixtures by
 * ingest's own normaliser (so it is the schema that event would give the source),
 * with the fields current Supabase logs carry laid over it (their types win), so that the dashboard's queries type
 * their leaves right before the first event of that source arrives. Ingest widens it further as
 * new fields appear.
 */
export function defaultSourceSchema(name: string): FieldMap {
  const known = fieldMapFromPaths(KNOWN_FIELDS[name] ?? {});
  const file = path.join(PROJECT_ROOT, 'seeds', 'fixtures', `${name}.json`);
  if (!fs.existsSync(file)) return known;
  const sample = JSON.parse(fs.readFileSync(file, 'utf8'));
  const { fields } = normaliseEvents([{ ...sample, timestamp: undefined }], { nowMs: Date.now(), retentionDays: 1 });
  // The known types win over the sample's: its placeholders (gotrue's `"status": "some status"`)
  // would make a number field a STRING, and `metadata.status >= 400` a type error.
  return overlayFieldMaps(fields, known);
}
