import type { CliCommand } from "../cli-command.js";

/** `keel report` (being written). */
export const reportCommand: CliCommand = {
  name: "report",
  summary: "(not built yet)",
  help: "keel report",
  options: {},
  allowPositionals: true,
  run: async (_args, io) => {
    io.stderr("keel report is not built yet\n");
    return 1;
  },
};
