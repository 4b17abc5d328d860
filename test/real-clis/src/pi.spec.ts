import { describeRealCli } from "./real-cli-conformance.js";
import { describeTestkitConformance } from "./testkit-conformance.js";

describeRealCli("pi", { unknownThreadId: "01a23360-0000-7000-8000-00000000beef" });
describeTestkitConformance("pi");
