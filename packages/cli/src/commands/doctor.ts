import type { CliCommand } from "../cli-command.js";

/** `keel doctor` (being written). */
export const doctorCommand: CliCommand = {
  name: "doctor",
  summary: "(not built yet)",
  help: "keel doctor",
  options: {},
  allowPositionals: true,
  run: async (_args, io) => {
    io.stderr("keel doctor is not built yet\n");
    return 1;
  },
};
