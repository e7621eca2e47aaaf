/** Every syntax node is an immutable object tagged by `kind`, remembering where it starts in its source text. */
export interface NodeBase<K extends string> {
  readonly kind: K;
  /** Offset of the node's first character in the text it was parsed from. */
  readonly pos: number;
}

/** Frozen factory shared by all node families: `make<Literal>({ kind: 'literal', … })`. */
export function make<N extends NodeBase<string>>(node: N): N {
  return Object.freeze(node);
}
