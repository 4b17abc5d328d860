import type { CliCommand } from "../cli-command.js";

/** `keel inspect` (being written). */
export const inspectCommand: CliCommand = {
  name: "inspect",
  summary: "(not built yet)",
  help: "keel inspect",
  options: {},
  allowPositionals: true,
  run: async (_args, io) => {
    io.stderr("keel inspect is not built yet\n");
    return 1;
  },
};
