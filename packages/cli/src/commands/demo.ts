import type { CliCommand } from "../cli-command.js";

/** `keel demo` (being written). */
export const demoCommand: CliCommand = {
  name: "demo",
  summary: "(not built yet)",
  help: "keel demo",
  options: {},
  allowPositionals: true,
  run: async (_args, io) => {
    io.stderr("keel demo is not built yet\n");
    return 1;
  },
};
