import { describe, expect, it } from "vitest";
import { builtInAdapterIds, listBuiltInAdapters, loadBuiltInAdapter } from "./index.js";

describe("builtInAdapterIds, listBuiltInAdapters and loadBuiltInAdapter", () => {
  it("list the adapter folders of the exports map, in its order", async () => {
    const ids = ["claude-code", "codex", "pi", "opencode", "copilot", "cursor", "gemini", "grok", "qoder", "deepseek"];
    expect(builtInAdapterIds()).toEqual(ids);
    expect((await listBuiltInAdapters()).map((info) => info.id)).toEqual(ids);
  });

  it.each(builtInAdapterIds())("loads %s, whose adapterInfo creates its backend", async (id) => {
    const adapter = (await loadBuiltInAdapter(id))._unsafeUnwrap();
    expect(adapter.id).toBe(id);
    const backend = adapter.create();
    expect(backend.id).toBe(id);
    expect(backend.capabilities).toEqual(adapter.capabilities);
  });

  it("passes options to the adapter, which refuses the ones it does not know", async () => {
    const codex = (await loadBuiltInAdapter("codex"))._unsafeUnwrap();
    expect(() => codex.create({ command: "/opt/codex/bin/codex" })).not.toThrow();
    expect(() => codex.create({ nonsense: true })).toThrow(expect.objectContaining({ code: "invalid_input" }));
  });

  it("answers not_found for an unknown id, with the known ones, and invalid_input for a non-string", async () => {
    for (const id of ["scripted", "kit", "nope", "../kit"]) {
      const missing = await loadBuiltInAdapter(id);
      expect(missing._unsafeUnwrapErr()).toMatchObject({ code: "not_found", details: { id, known: builtInAdapterIds() } });
    }
    expect((await loadBuiltInAdapter(42 as unknown as string))._unsafeUnwrapErr().code).toBe("invalid_input");
    expect((await loadBuiltInAdapter(""))._unsafeUnwrapErr().code).toBe("invalid_input");
  });
});
