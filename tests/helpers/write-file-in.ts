// Writes a file of a throwaway tree, making its folders: the lint and check tests plant files in
// one and run Biome or a script of scripts/ over it.
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";

export function writeFileIn(dir: string, rel: string, content: string): void {
  mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
  writeFileSync(path.join(dir, rel), content);
}
