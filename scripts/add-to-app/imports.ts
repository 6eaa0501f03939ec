// The import specifiers of a copied file, read by TypeScript's own parser: a string that merely
// looks like `from "x"` (an error message, a SQL fragment, a JSDoc example) is not an import.
import ts from "typescript";

export interface ImportSpecifier {
  /** The module named, as written between the quotes. */
  spec: string;
  /** Offsets of the string literal in the source, quotes included. */
  start: number;
  end: number;
  /** Whether only types come through it (`import type`, every name `type`, `import("x").T`): compiled code drops it. */
  typeOnly: boolean;
}

const SCRIPT = /\.(ts|tsx|mts|cts|js|jsx|mjs|cjs)$/;

/** An import declaration or re-export whose every name is a type. */
function isTypeOnly(node: ts.ImportDeclaration | ts.ExportDeclaration): boolean {
  if (ts.isExportDeclaration(node)) {
    const names = node.exportClause;
    return node.isTypeOnly || (!!names && ts.isNamedExports(names) && names.elements.every((e) => e.isTypeOnly));
  }
  const clause = node.importClause;
  if (!clause) return false; // `import "./x"`: run for its effect
  if (clause.isTypeOnly) return true;
  const names = clause.namedBindings;
  return !clause.name && !!names && ts.isNamedImports(names) && names.elements.every((e) => e.isTypeOnly);
}

/**
 * Every static import, re-export, `import type`, dynamic `import("…")`, `require("…")` and module
 * augmentation (`declare module "…"`) of a script.
 */
export function importSpecifiers(source: string, fileName: string): ImportSpecifier[] {
  if (!SCRIPT.test(fileName)) return []; // SQL, Markdown, JSON: nothing they hold is an import
  const kind = fileName.endsWith("x") ? ts.ScriptKind.TSX : ts.ScriptKind.TS;
  const file = ts.createSourceFile(fileName, source, ts.ScriptTarget.Latest, true, kind);
  const found: ImportSpecifier[] = [];
  const add = (literal: ts.Node | undefined, typeOnly = false) => {
    if (literal && ts.isStringLiteralLike(literal)) {
      found.push({ spec: literal.text, start: literal.getStart(file), end: literal.getEnd(), typeOnly });
    }
  };
  const visit = (node: ts.Node) => {
    if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) add(node.moduleSpecifier, isTypeOnly(node));
    // `declare module "../types"`: a module augmentation names the module it augments.
    else if (ts.isModuleDeclaration(node) && ts.isStringLiteral(node.name)) add(node.name, true);
    else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) {
      add(node.moduleReference.expression);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) add(node.argument.literal, true);
    else if (ts.isCallExpression(node) && node.arguments.length >= 1) {
      const isImport = node.expression.kind === ts.SyntaxKind.ImportKeyword;
      const isRequire = ts.isIdentifier(node.expression) && node.expression.text === "require";
      if (isImport || isRequire) add(node.arguments[0]);
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return found.sort((a, b) => a.start - b.start);
}
