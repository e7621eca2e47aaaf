/** Translator warnings as the HTTP API shows them (docs/COMPATIBILITY.md, "Unknown fields"). */
import type { SqlWarning } from '../sql/index.js';

export interface QueryWarning {
  reason: 'unknownField';
  message: string;
  location: string;
}

/** Translator warnings, located like error details (`query:<line>:<column>`). */
export function queryWarnings(warnings: readonly SqlWarning[], where: 'query' | 'sql'): QueryWarning[] {
  return warnings.map((w) => ({ reason: 'unknownField', message: w.message, location: `${where}:${w.line}:${w.column}` }));
}
