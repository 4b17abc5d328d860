import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { MAX_INPUT_TOKENS_ENV, MAX_TURNS_ENV, POLICY_ENV, policyFromEnv } from "./session-env.js";

describe("policyFromEnv", () => {
  it("defaults to auto, 6 turns and 120,000 tokens when nothing is set", () => {
    expect(policyFromEnv({})._unsafeUnwrap()).toEqual({ policy: "auto", limits: { maxTurns: 6, maxInputTokens: 120_000 } });
  });

  it("reads every policy and both limits", () => {
    for (const policy of ["fresh", "mission", "rolling", "auto"] as const) {
      const settings = policyFromEnv({ [POLICY_ENV]: policy, [MAX_TURNS_ENV]: "3", [MAX_INPUT_TOKENS_ENV]: " 5000 " });
      expect(settings._unsafeUnwrap()).toEqual({ policy, limits: { maxTurns: 3, maxInputTokens: 5000 } });
    }
  });

  it.each([
    [POLICY_ENV, "Rolling"],
    [POLICY_ENV, ""],
    [POLICY_ENV, "rolling,fresh"],
    [MAX_TURNS_ENV, "0"],
    [MAX_TURNS_ENV, "-1"],
    [MAX_TURNS_ENV, "6.5"],
    [MAX_TURNS_ENV, "1e3"],
    [MAX_TURNS_ENV, ""],
    [MAX_TURNS_ENV, "six"],
    [MAX_INPUT_TOKENS_ENV, "120k"],
    [MAX_INPUT_TOKENS_ENV, "0x10"],
    [MAX_INPUT_TOKENS_ENV, "99999999999999999999"],
  ])("refuses %s=%j with invalid_input naming the variable", (variable, value) => {
    const result = policyFromEnv({ [variable]: value });
    expect(result.isErr()).toBe(true);
    const error = result._unsafeUnwrapErr();
    expect(error.code).toBe("invalid_input");
    expect(error.details.variable).toBe(variable);
  });

  it("parses every positive whole number back and refuses everything else (property)", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 1_000_000 }), (turns) => {
        expect(policyFromEnv({ [MAX_TURNS_ENV]: String(turns) })._unsafeUnwrap().limits.maxTurns).toBe(turns);
      }),
    );
    fc.assert(
      fc.property(
        fc.string().filter((text) => !/^\s*[0-9]+\s*$/.test(text)),
        (text) => {
          const result = policyFromEnv({ [MAX_INPUT_TOKENS_ENV]: text });
          expect(result.isErr() && result.error.details.variable).toBe(MAX_INPUT_TOKENS_ENV);
        },
      ),
    );
    fc.assert(
      fc.property(
        fc.string().filter((text) => !["fresh", "mission", "rolling", "auto"].includes(text.trim())),
        (text) => {
          const result = policyFromEnv({ [POLICY_ENV]: text });
          expect(result.isErr() && result.error.code).toBe("invalid_input");
        },
      ),
    );
  });
});
