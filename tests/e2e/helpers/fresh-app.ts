// Apps of a user's own, made for the end-to-end tests: a minimal create-next-app-style app (with
// our node_modules standing in for `npm install`) and add-to-app run on it from this repository.
import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { REPO_ROOT } from "./next-server";

const ours = JSON.parse(readFileSync(path.join(REPO_ROOT, "package.json"), "utf8"));

/**
 * The files of a minimal app as create-next-app 16.4 writes them (TypeScript, app router, `@/`
 * alias, `cacheComponents`), less Tailwind and the fonts: tests/fixtures/apps holds the real ones.
 */
export function writeMinimalApp(
  dir: string,
  { install = true, files: extra = {} }: { install?: boolean; files?: Record<string, string> } = {},
) {
  const files: Record<string, string> = {
    "package.json": JSON.stringify(
      {
        name: "my-app",
        private: true,
        scripts: { dev: "next dev", build: "next build", start: "next start" },
        dependencies: {
          next: ours.dependencies.next,
          react: ours.dependencies.react,
          "react-dom": ours.dependencies["react-dom"],
        },
        devDependencies: {
          typescript: ours.devDependencies.typescript,
          "@types/node": ours.devDependencies["@types/node"],
          "@types/react": ours.devDependencies["@types/react"],
        },
      },
      null,
      2,
    ),
    "tsconfig.json": JSON.stringify(
      {
        compilerOptions: {
          target: "ES2017",
          lib: ["dom", "dom.iterable", "esnext"],
          allowJs: true,
          skipLibCheck: true,
          strict: true,
          noEmit: true,
          esModuleInterop: true,
          module: "esnext",
          moduleResolution: "bundler",
          resolveJsonModule: true,
          isolatedModules: true,
          jsx: "react-jsx",
          incremental: true,
          plugins: [{ name: "next" }],
          paths: { "@/*": ["./*"] },
        },
        include: ["next-env.d.ts", "**/*.ts", "**/*.tsx", ".next/types/**/*.ts", ".next/dev/types/**/*.ts"],
        exclude: ["node_modules"],
      },
      null,
      2,
    ),
    "next.config.ts":
      `import type { NextConfig } from "next";\n\n` +
      `const nextConfig: NextConfig = {\n  /* config options here */\n` +
      `  cacheComponents: true,\n  partialPrefetching: true,\n};\n\n` +
      `export default nextConfig;\n`,
    ".gitignore": "/node_modules\n/.next/\n",
    "app/layout.tsx":
      "export default function RootLayout({ children }: { children: React.ReactNode }) {\n" +
      `  return (\n    <html lang="en">\n      <body>{children}</body>\n    </html>\n  );\n}\n`,
    "app/page.tsx": `export default function Home() {\n  return <main>my app</main>;\n}\n`,
    ...extra,
  };
  for (const [rel, content] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    writeFileSync(path.join(dir, rel), content);
  }
  if (install) linkNodeModules(dir);
}

/**
 * Our node_modules stand in for `npm install` (they hold next, react and the toolkit's packages).
 * Hard links (~0.3 s), not a symlink: Turbopack refuses files that resolve outside the app's root.
 */
function linkNodeModules(dir: string) {
  const from = path.join(REPO_ROOT, "node_modules");
  const to = path.join(dir, "node_modules");
  if (spawnSync("cp", ["-al", from, to]).status === 0) return;
  rmSync(to, { recursive: true, force: true });
  // Another filesystem: a plain copy (slower, same result).
  const copied = spawnSync("cp", ["-a", from, to], { encoding: "utf8" });
  if (copied.status !== 0) throw new Error(`could not copy node_modules: ${copied.stderr}`);
}

/** `npm run add-to-app -- <dir> …options` from this repository: its exit status and everything it printed. */
export function addToApp(dir: string, ...options: string[]) {
  const result = spawnSync(
    path.join(REPO_ROOT, "node_modules", ".bin", "tsx"),
    [path.join(REPO_ROOT, "scripts", "add-to-app.ts"), dir, ...options],
    {
      cwd: REPO_ROOT,
      encoding: "utf8",
    },
  );
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}
