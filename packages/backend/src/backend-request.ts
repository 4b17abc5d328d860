import { isAbsolute } from "node:path";
import { isJsonValue, validate, type KeelError } from "@keel/core";
import type { Result } from "neverthrow";
import { z } from "zod";
import type { BackendTurnRequest } from "./backend-turn.js";

/** Longest thread id accepted (ids reach argv; pi also accepts a session file path). */
export const MAX_THREAD_ID_LENGTH = 1024;
/** Longest turn timeout accepted: one day. */
export const MAX_TURN_TIMEOUT_MS = 24 * 60 * 60 * 1000;
/** Largest {@link BackendTurnRequest.resumeState} accepted, in bytes of its JSON. */
export const MAX_RESUME_STATE_BYTES = 64 * 1024;

const absolutePath = z
  .string()
  .min(1)
  .refine((path) => isAbsolute(path), { message: "must be an absolute path" })
  .refine((path) => !path.includes("\0"), { message: "must not contain NUL" });

// eslint-disable-next-line no-control-regex
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f]/;

// `process.env` is not a plain object and zod refuses it as a record: it is read as a copy.
function plainObject(value: unknown): unknown {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? { ...value } : value;
}

const resumeState = z
  .record(z.string(), z.unknown())
  .refine((state) => isJsonValue(state), { message: "must be plain JSON" })
  .refine((state) => Buffer.byteLength(JSON.stringify(state)) <= MAX_RESUME_STATE_BYTES, {
    message: `must be at most ${MAX_RESUME_STATE_BYTES} bytes of JSON`,
  });

/** zod schema of {@link BackendTurnRequest}. Unknown keys are rejected. */
export const BackendTurnRequestSchema = z.strictObject({
  prompt: z
    .string()
    .min(1, { message: "must not be empty" })
    .refine((prompt) => !prompt.includes("\0"), { message: "must not contain NUL" }),
  cwd: absolutePath,
  model: z
    .string()
    .min(1)
    .max(256)
    .refine((model) => !model.startsWith("-") && !CONTROL_CHARACTERS.test(model), {
      message: "must not start with '-' or contain control characters",
    })
    .optional(),
  threadId: z
    .string()
    .min(1)
    .max(MAX_THREAD_ID_LENGTH)
    .refine((id) => !id.startsWith("-") && !/\s/.test(id) && !CONTROL_CHARACTERS.test(id), {
      message: "must not start with '-' or contain whitespace or control characters",
    })
    .optional(),
  resumeState: resumeState.optional(),
  skillPaths: z.array(absolutePath).max(512).optional(),
  timeoutMs: z.number().int().positive().max(MAX_TURN_TIMEOUT_MS),
  env: z
    .preprocess(
      plainObject,
      z.record(
        z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, { message: "environment variable names are letters, digits and '_'" }),
        z.string().refine((value) => !value.includes("\0"), { message: "must not contain NUL" }),
      ),
    )
    .optional(),
});

/**
 * Validates a turn request: the first thing every adapter does, before anything is started.
 *
 * @returns the request, or `invalid_input` naming the first problem (`details.issues`).
 *
 * @example
 * ```ts
 * const valid = validateBackendTurnRequest({ prompt: "hi", cwd: "repo", timeoutMs: 1000 });
 * valid.isErr(); // true: cwd must be an absolute path
 * ```
 */
export function validateBackendTurnRequest(request: unknown): Result<BackendTurnRequest, KeelError> {
  return validate(BackendTurnRequestSchema, request, "turn request") as Result<BackendTurnRequest, KeelError>;
}
