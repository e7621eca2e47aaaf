const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Resources are addressed by UUID or by name: a UUID selects by id (docs/API.md, "Conventions"). */
export function isUuid(value: string): boolean {
  return UUID_RE.test(value);
}
