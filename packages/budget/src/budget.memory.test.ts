import { createMemoryStore } from "@keel/store";
import { describeBudgetSuite } from "../../../test/support/budget-suite.js";

describeBudgetSuite("the memory store", {
  create: async () => {
    const store = createMemoryStore();
    return { store, dispose: () => store.close() };
  },
});
