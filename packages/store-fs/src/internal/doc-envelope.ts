import { hash } from "node:crypto";
import { canonicalJson, findNonJson, utf8Bytes, type JsonValue } from "@keel/core";
import { err, ok, type Result } from "neverthrow";

/** The format tag of a document file. */
export const DOC_FORMAT = "keel.doc.v1";

/** A document file's content, verified. */
export interface DocEnvelope {
  key: string[];
  version: number;
  updatedAt: string;
  /** A tombstone: the document was deleted at `version`. */
  deleted: boolean;
  value: JsonValue;
  /** Bytes of the value's JSON text. */
  bytes: number;
}

function checksumOf(key: readonly string[], version: number, updatedAt: string, deleted: boolean, valueText: string): string {
  // One call (no Hash object): the same digest as hashing the header and then the value text.
  return `sha256:${hash("sha256", `${DOC_FORMAT}\n${key.join("/")}\n${version}\n${updatedAt}\n${deleted}\n${valueText}`, "hex")}`;
}

/**
 * The text of a document file: an indented JSON envelope (readable and diffable by people)
 * holding the format, key, version, time, tombstone flag, a sha256 checksum over all of them and
 * the value's JSON text (`valueText`: `JSON.stringify` of the value, its key order kept), and the value.
 */
export function encodeDocEnvelope(input: {
  key: readonly string[];
  version: number;
  updatedAt: string;
  deleted: boolean;
  value: JsonValue;
  valueText: string;
}): string {
  const envelope = {
    format: DOC_FORMAT,
    key: input.key,
    version: input.version,
    updatedAt: input.updatedAt,
    deleted: input.deleted,
    checksum: checksumOf(input.key, input.version, input.updatedAt, input.deleted, input.valueText),
    value: input.value,
  };
  return `${JSON.stringify(envelope, null, 2)}\n`;
}

/**
 * Parses and verifies a document file's text (and returns the value's JSON text too). Fails (with the reason) on anything that is not a
 * complete, intact envelope of `expectedKey`: truncation, bad JSON, a wrong shape or key, or a
 * checksum mismatch.
 */
export function decodeDocEnvelope(text: string, expectedKey: readonly string[]): Result<DocEnvelope & { valueText: string }, string> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    return err(`not valid JSON (${(error as Error).message})`);
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return err("not a JSON object");
  const envelope = parsed as Record<string, unknown>;
  if (envelope.format !== DOC_FORMAT) return err(`unknown format ${JSON.stringify(envelope.format)}; expected "${DOC_FORMAT}"`);
  const { key, version, updatedAt, deleted, checksum } = envelope;
  if (!Array.isArray(key) || key.length !== expectedKey.length || key.some((segment, index) => segment !== expectedKey[index])) {
    return err(`holds key ${JSON.stringify(key)}, not ${JSON.stringify(expectedKey)}`);
  }
  if (typeof version !== "number" || !Number.isSafeInteger(version) || version < 1) return err("has no valid version");
  if (typeof updatedAt !== "string") return err("has no updatedAt");
  if (typeof deleted !== "boolean") return err("has no deleted flag");
  if (typeof checksum !== "string") return err("has no checksum");
  if (!("value" in envelope)) return err("has no value");
  const value = envelope.value;
  if (findNonJson(value) !== undefined) return err("holds a value that is not plain JSON");
  // The checksum covers the value's JSON text in its writer's key order; files written before
  // values kept their key order sealed the canonical text (sorted keys) instead: both verify.
  const valueText = JSON.stringify(value);
  if (checksumOf(expectedKey, version, updatedAt, deleted, valueText) !== checksum && checksumOf(expectedKey, version, updatedAt, deleted, canonicalJson(value)) !== checksum) {
    return err("fails its checksum");
  }
  return ok({ key: [...expectedKey], version, updatedAt, deleted, value: value as JsonValue, bytes: utf8Bytes(valueText), valueText });
}
