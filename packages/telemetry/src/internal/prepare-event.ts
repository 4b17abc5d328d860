import { KeelError, validate, type EventBase, type KeelEvent } from "@keel/core";
import type { Result } from "neverthrow";
import { KeelEventSchema } from "../event-schema.js";
import { redactEvent } from "../event-redaction.js";

/** Validates one event and redacts its content fields unless `includeContent`. */
export function prepareEvent(event: unknown, includeContent: boolean): Result<KeelEvent, KeelError> {
  return validate(KeelEventSchema, event, "event").map((valid) =>
    includeContent ? valid : (redactEvent(valid as EventBase<string>) as KeelEvent),
  );
}

/** The error of a sink used after `close()`. */
export function closedError(what: string): KeelError {
  return new KeelError("invalid_input", `${what} is closed: create a new one to record more events`);
}
