/**
 * The trigrams `pg_trgm` reads from a search pattern, and the part of a needle whose trigrams are
 * all rare: what search.ts gives a trigram index instead of a needle with common parts.
 *
 * pg_trgm (trgm_op.c) splits text into words, runs of alphanumerics (`t_isalnum`), lowercases them
 * and takes every three consecutive characters of each word padded with two spaces before and one
 * after (`show_trgm('ab-cde')` = `{"  a"," ab","ab ","  c"," cd","cde","de "}`). For a LIKE
 * pattern (generate_wildcard_trgm) a word next to a wildcard gets no padding on that side: in
 * `'%needle%'` the needle's first word has none before and its last none after. Only ASCII is
 * modelled here (whether another character is a letter depends on the database's locale): a
 * needle with any other character is left as it is.
 */

/** The trigrams of `text` with the needle's ends padded or not (pg_trgm's own rule inside). */
export function trigramsOf(text: string, ends: { padStart: boolean; padEnd: boolean }): Set<string> {
  const out = new Set<string>();
  const words = /[A-Za-z0-9]+/g;
  for (let m = words.exec(text); m; m = words.exec(text)) {
    const before = m.index > 0 || ends.padStart ? '  ' : '';
    const after = m.index + m[0].length < text.length || ends.padEnd ? ' ' : '';
    const padded = before + m[0].toLowerCase() + after;
    for (let i = 0; i + 3 <= padded.length; i++) out.add(padded.slice(i, i + 3));
  }
  return out;
}

/** The trigrams pg_trgm searches the index for with `LIKE '%<needle escaped>%'` (or ILIKE). */
export function needleTrigrams(needle: string): Set<string> {
  return trigramsOf(needle, { padStart: false, padEnd: false });
}

/**
 * Trigrams every text holding `text` anywhere has (pg_trgm's `show_trgm` of it holds them), in any
 * database locale: the ends of `text` get no padding (the text around it may extend its words),
 * nor do the sides of a word next to a character outside ASCII (whether pg_trgm takes that for a
 * letter depends on the locale, and a trigram holding one is hashed; either way the word's own
 * trigrams are in the longer word's), nor next to `I`, which a Turkish locale lowercases to `ı`.
 * `anyCase`: for a case-insensitive regex, which matches `i` to `I` by ASCII's rule where pg_trgm
 * lowercases `I` by the locale's, so `i` parts words too. What the rare-trigram index is asked for
 * (search.ts); empty when no word has three characters.
 */
export function containedTrigrams(text: string, anyCase = false): Set<string> {
  const out = new Set<string>();
  for (const piece of text.split(anyCase ? /[\P{ASCII}Ii]+/u : /[\P{ASCII}I]+/u))
    for (const t of trigramsOf(piece, { padStart: false, padEnd: false })) out.add(t);
  return out;
}

/**
 * The texts a LIKE pattern (backslash escapes, the translator's only escape character) requires
 * to hold, in order: the runs between its wildcards, escapes undone; undefined when the pattern
 * is not well formed (a trailing backslash: Postgres refuses it).
 */
export function likeLiterals(pattern: string): string[] | undefined {
  const runs: string[] = [];
  let run = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '%' || c === '_') {
      if (run) runs.push(run);
      run = '';
    } else if (c === '\\') {
      if (i + 1 >= pattern.length) return undefined;
      run += pattern[++i];
    } else run += c;
  }
  if (run) runs.push(run);
  return runs;
}

/** The needles modelled here: which other characters pg_trgm takes for letters depends on the locale. */
const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;

/** Needles longer than this are left as they are: the search below is quadratic in the length. */
export const MAX_RARE_NEEDLE = 1000;

/**
 * The longest substring of `needle` whose `%…%` trigrams are all outside `common` and hold at
 * least one of three alphanumerics; undefined when the needle has no common trigram (nothing to
 * gain), is not ASCII, or has no such part. Any substring works for exactness (search.ts); the
 * longest keeps the most rare trigrams, so the index finds the fewest rows to recheck.
 *
 * A substring's trigrams are a subset of any longer substring's holding it (padding comes only
 * from characters inside), so "no common trigram" holds on windows closed under shrinking: for
 * each start the longest such window ends no earlier than the previous start's (two pointers).
 */
export function rarePart(needle: string, common: ReadonlySet<string>): string | undefined {
  if (!common.size || needle.length > MAX_RARE_NEEDLE || !PRINTABLE_ASCII.test(needle)) return undefined;
  const rare = (s: string) => [...needleTrigrams(s)].every((t) => !common.has(t));
  if (rare(needle)) return undefined;
  let best: string | undefined;
  let end = 0;
  for (let start = 0; start < needle.length; start++) {
    end = Math.max(end, start);
    while (end < needle.length && rare(needle.slice(start, end + 1))) end++;
    const part = needle.slice(start, end);
    if (part.length > (best?.length ?? 0) && /[A-Za-z0-9]{3}/.test(part)) best = part;
  }
  return best;
}

/** Whether every trigram pg_trgm looks up for `%needle%` is in `common` (true for a needle with none); false outside ASCII. */
export function allCommon(needle: string, common: ReadonlySet<string>): boolean {
  return PRINTABLE_ASCII.test(needle) && [...needleTrigrams(needle)].every((t) => common.has(t));
}
