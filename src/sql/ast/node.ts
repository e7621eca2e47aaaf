/** Every syntax node is an immutable object tagged by `kind`, remembering where it starts in its source text. */
export interface NodeBase<K extends string> {
  readonly kind: K;
  /** Offset of the node's first character in the text it was parsed from. */
  readonly pos: number;
}

/**
 * Factory shared by all node families: `make<Literal>({ kind: 'literal', … })`. Nodes are
 * immutable by type (every field `readonly`) rather than by Object.freeze: freezing every node
 * doubles translation time (BENCHMARKS.md, "Translation"), and the compiler already refuses
 * writes.
 */
export function make<N extends NodeBase<string>>(node: N): N {
  return node;
}
