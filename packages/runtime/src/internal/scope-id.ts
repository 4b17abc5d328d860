import { createHash } from "node:crypto";

/** A budget scope id `<kind>.<name>` that stays a safe name (names too long are hashed). */
export function scopeId(kind: string, name: string): string {
  const plain = `${kind}.${name}`;
  if (plain.length <= 128) return plain;
  return `${kind}.h-${createHash("sha256").update(name).digest("hex").slice(0, 40)}`;
}
