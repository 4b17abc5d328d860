import { describe, expect, it } from "vitest";
import { safeTurnListener, type BackendTurnEvent } from "./index.js";

describe("safeTurnListener", () => {
  it("passes events on, swallows a listener's throw and makes no listener a no-op", () => {
    const seen: BackendTurnEvent[] = [];
    const event: BackendTurnEvent = { type: "tool_call", tool: "Read", at: 1 };
    safeTurnListener((received) => seen.push(received))(event);
    expect(seen).toEqual([event]);
    expect(() =>
      safeTurnListener(() => {
        throw new Error("observer bug");
      })(event),
    ).not.toThrow();
    expect(() => safeTurnListener(undefined)(event)).not.toThrow();
  });
});
