/**
 * Hints while typing LQL (docs/LQL.md): field paths from the source's schema for the word being
 * typed, and the grammar's operators once a field is complete.
 */
interface FieldSchema {
  type: string;
  repeated: boolean;
  fields?: Record<string, FieldSchema>;
}

/** Leaf paths of a source schema as LQL writes them (`metadata.x` as `m.x`), with their types. */
export function fieldPaths(schema: unknown): { path: string; type: string }[] {
  const out: { path: string; type: string }[] = [
    { path: 'event_message', type: 'STRING' },
    { path: 'id', type: 'STRING' },
    { path: 'project', type: 'STRING' },
  ];
  const walk = (fields: Record<string, FieldSchema>, prefix: string) => {
    for (const [name, f] of Object.entries(fields)) {
      const path = prefix ? `${prefix}.${name}` : name === 'metadata' ? 'm' : name;
      if (f.fields) walk(f.fields, path);
      else out.push({ path, type: f.repeated ? `ARRAY<${f.type}>` : f.type });
    }
  };
  walk((schema ?? {}) as Record<string, FieldSchema>, '');
  return out.sort((a, b) => a.path.localeCompare(b.path));
}

export const PREFIXES = [
  { text: 't:last@15m', help: 'time: last@N unit, today, yesterday, this@week, 2024-03-{01..07}' },
  { text: 'c:count(*)', help: 'chart: count(*), countd(f), avg|sum|max|p50|p95|p99(f)' },
  { text: 'c:group_by(t::minute)', help: 'chart period: second, minute, hour, day' },
  { text: 's:', help: 'select a field: s:m.path@alias' },
  { text: '~', help: 'regex on the message: ~^err, ~"a|b"' },
  { text: '-', help: 'negate the next filter' },
];

const OPERATORS = [
  { text: ':', help: 'equals' },
  { text: ':>', help: 'greater than' },
  { text: ':>=', help: 'at least' },
  { text: ':<', help: 'less than' },
  { text: ':<=', help: 'at most' },
  { text: ':~', help: 'matches a regex' },
  { text: ':NULL', help: 'has no value' },
  { text: ':@>', help: 'array contains' },
  { text: ':@>~', help: 'array has an element matching' },
  { text: ':1..10', help: 'range, both ends included' },
];

export interface Hint {
  /** The whole query with the hint applied. */
  apply: string;
  label: string;
  help: string;
}

/** Hints for the last word of `text`. */
export function hintsFor(text: string, fields: { path: string; type: string }[]): Hint[] {
  const start = text.search(/\S*$/);
  const before = text.slice(0, start);
  let word = text.slice(start);
  const negate = word.startsWith('-') ? '-' : '';
  word = word.slice(negate.length);
  if (word === '') return PREFIXES.map((p) => ({ apply: before + p.text, label: p.text, help: p.help }));
  if (word.includes(':')) return [];
  const exact = fields.find((f) => f.path === word);
  if (exact)
    return OPERATORS.filter((o) => !o.text.startsWith(':@>') || exact.type.startsWith('ARRAY')).map((o) => ({
      apply: before + negate + word + o.text,
      label: word + o.text,
      help: `${o.help} (${exact.type})`,
    }));
  return fields
    .filter((f) => f.path.startsWith(word) || f.path.includes(`.${word}`))
    .slice(0, 8)
    .map((f) => ({ apply: before + negate + f.path, label: f.path, help: f.type }));
}
