import { type Clock, type EventBus, KeelError, isSafeName, validate } from "@keel/core";
import type { KeelStore } from "@keel/store";
import { err, ResultAsync } from "neverthrow";
import { z } from "zod";
import { type ImportPiSessionOptions, ImportPiSessionOptionsSchema, importPiSession, type PiImportDiagnostic } from "./pi-session-import.js";
import { checkEntriesFit, openTranscript, type Transcript, writeInto } from "./transcript-open.js";
import { OpenTranscriptOptionsSchema } from "./transcript-options.js";

const OptionsSchema = ImportPiSessionOptionsSchema.extend({
  ...OpenTranscriptOptionsSchema.pick({ store: true, clock: true, events: true }).shape,
  text: z.string(),
  sessionId: OpenTranscriptOptionsSchema.shape.sessionId.optional(),
});

/** Options of {@link importPiSessionToStore}. */
export interface ImportPiSessionToStoreOptions extends ImportPiSessionOptions {
  store: KeelStore;
  /** The text of the pi session file. */
  text: string;
  /** The new session's id (default the file's session id, which must then be a safe name). */
  sessionId?: string;
  clock?: Clock;
  events?: EventBus;
}

/**
 * Reads a pi session file ({@link importPiSession}) and writes it into a new transcript of the
 * store: every entry in one atomic append, keeping pi's ids, then the leaf pi would resume at.
 * `conflict` when the session already has entries. The options are strict: an unknown option or
 * one of the wrong type is `invalid_input`, and a refused import writes nothing (the file is read
 * and checked before the session is opened).
 */
export function importPiSessionToStore(options: ImportPiSessionToStoreOptions): ResultAsync<{ transcript: Transcript; diagnostics: PiImportDiagnostic[] }, KeelError> {
  const checked = validate(OptionsSchema, options, "pi import options");
  if (checked.isErr()) return new ResultAsync(Promise.resolve(err(checked.error)));
  const imported = importPiSession(options.text, options.strict === undefined ? {} : { strict: options.strict });
  if (imported.isErr()) return new ResultAsync(Promise.resolve(err(imported.error)));
  const session = imported.value;
  const sessionId = options.sessionId ?? session.sessionId;
  if (!isSafeName(sessionId)) {
    return new ResultAsync(Promise.resolve(err(new KeelError("invalid_input", `the file's session id "${sessionId.slice(0, 64)}" is not a safe name: pass sessionId`, { details: { sessionId: sessionId.slice(0, 256) } }))));
  }
  const fits = checkEntriesFit(options.store, session.entries);
  if (fits.isErr()) return new ResultAsync(Promise.resolve(err(fits.error)));
  return openTranscript({
    store: options.store,
    sessionId,
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.events ? { events: options.events } : {}),
  }).andThen((transcript) => {
    if (transcript.tree().size > 0) {
      return err(new KeelError("conflict", `session "${sessionId}" already has entries: import into a new session id`, { details: { sessionId } }));
    }
    const leaf = session.leafId();
    return writeInto(transcript, session.entries)
      .andThen(() => (leaf !== null && transcript.leafId() !== leaf ? transcript.setLeaf(leaf) : ResultAsync.fromSafePromise(Promise.resolve(undefined))))
      .map(() => ({ transcript, diagnostics: session.diagnostics }));
  });
}
