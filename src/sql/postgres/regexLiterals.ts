/**
 * The texts every match of a Postgres regular expression (an ARE, what `~` and `~*` read) holds:
 * its runs of ordinary characters that no quantifier may skip, read outside groups and bracket
 * expressions. search.ts asks the rare-trigram index for their trigrams (trigrams.ts
 * `containedTrigrams`), so a regex search reads the index as a LIKE does; the regex itself is
 * still tested on each row found.
 *
 * Conservative by construction: what it does not read with certainty gives no text (a group, a
 * bracket expression, `.`, a class escape, an anchor end the run they interrupt) or no answer at
 * all (undefined: an alternation outside a group, an escape that enters a character by its code,
 * a back-reference, a bound it cannot read, the `***` directors, a comment, the options b, e, q and x). Fewer
 * texts only cost speed; a text a match may lack would lose rows. Case does not matter: pg_trgm
 * lowercases both sides.
 */

/** Escapes of one class or constraint, with no argument: `\d \s \w` and their negations, `\A \Z \m \M \y \Y`. */
const CLASS_OR_CONSTRAINT = new Set(['d', 'D', 's', 'S', 'w', 'W', 'A', 'Z', 'm', 'M', 'y', 'Y']);

/** The embedded options an ARE starts with, `(?flags)`: the flags and where the expression itself starts. */
export function regexOptions(regex: string): { flags: string; start: number } {
  const options = /^\(\?([a-z]*)\)/.exec(regex);
  return options ? { flags: options[1], start: options[0].length } : { flags: '', start: 0 };
}

/** The required runs of `regex`, in order; undefined when it cannot be read here (above). */
export function regexLiterals(regex: string): string[] | undefined {
  // `***` directors; `(?#…)` comments, which may hold unbalanced brackets and parentheses.
  if (regex.startsWith('***') || regex.includes('(?#')) return undefined;
  const { flags, start } = regexOptions(regex);
  if (/[beqx]/.test(flags)) return undefined;
  let i = start;
  const runs: string[] = [];
  let run = '';
  let lastIsLiteral = false;
  const end = () => {
    if (run) runs.push(run);
    run = '';
  };
  const atom = (literal?: string) => {
    if (literal === undefined) end();
    else run += literal;
    lastIsLiteral = literal !== undefined;
  };
  while (i < regex.length) {
    const c = regex[i];
    if (c === '\\') {
      const d = regex[i + 1];
      if (d === undefined) return undefined;
      if (/[A-Za-z0-9]/.test(d)) {
        if (!CLASS_OR_CONSTRAINT.has(d)) return undefined;
        atom();
      } else atom(d);
      i += 2;
    } else if (c === '[') {
      const after = bracketEnd(regex, i);
      if (after === undefined) return undefined;
      atom();
      i = after;
    } else if (c === '(') {
      const after = groupEnd(regex, i);
      if (after === undefined) return undefined;
      atom();
      i = after;
    } else if (c === '|' || c === ')') {
      return undefined;
    } else if (c === '.' || c === '^' || c === '$') {
      atom();
      i++;
    } else if (c === '*' || c === '+' || c === '?' || c === '{') {
      const q = quantifier(regex, i);
      if (!q) return undefined;
      // The quantified atom is the run's last character only when it was one: drop it if it may be
      // absent; either way the run cannot go on through a repetition.
      if (lastIsLiteral && q.min === 0) run = run.slice(0, -1);
      end();
      lastIsLiteral = false;
      i = q.end;
    } else {
      atom(c);
      i++;
    }
  }
  end();
  return runs;
}

/** The quantifier at `i` (`*`, `+`, `?`, `{m}`, `{m,}`, `{m,n}`, each maybe non-greedy `?`): its least count and end. */
function quantifier(regex: string, i: number): { min: number; end: number } | undefined {
  let min: number;
  let end: number;
  if (regex[i] === '{') {
    const bound = /^\{(\d+)(,(\d*))?\}/.exec(regex.slice(i));
    if (!bound) return undefined;
    min = Number(bound[1]);
    end = i + bound[0].length;
  } else {
    min = regex[i] === '+' ? 1 : 0;
    end = i + 1;
  }
  if (regex[end] === '?') end++;
  return { min, end };
}

/** The index after the bracket expression opening at `i`, or undefined when it does not close. */
function bracketEnd(regex: string, i: number): number | undefined {
  let j = i + 1;
  if (regex[j] === '^') j++;
  if (regex[j] === ']') j++; // a `]` first is an ordinary character
  while (j < regex.length) {
    const c = regex[j];
    if (c === ']') return j + 1;
    if (c === '\\') j += 2;
    else if (c === '[' && (regex[j + 1] === ':' || regex[j + 1] === '.' || regex[j + 1] === '=')) {
      const close = regex.indexOf(regex[j + 1] + ']', j + 2);
      if (close < 0) return undefined;
      j = close + 2;
    } else j++;
  }
  return undefined;
}

/** The index after the group opening at `i` (its nested groups and brackets skipped), or undefined when it does not close. */
function groupEnd(regex: string, i: number): number | undefined {
  let depth = 0;
  let j = i;
  while (j < regex.length) {
    const c = regex[j];
    if (c === '\\') j += 2;
    else if (c === '[') {
      const after = bracketEnd(regex, j);
      if (after === undefined) return undefined;
      j = after;
    } else {
      if (c === '(') depth++;
      else if (c === ')' && --depth === 0) return j + 1;
      j++;
    }
  }
  return undefined;
}
