import { Fragment } from "react";

/**
 * A value as indented JSON that grows with its content. A long string wraps after its slashes
 * (a URL, a path) rather than at any character: each slash is followed by a line-break opportunity.
 */
export function JsonOutput({ value, testId = "output" }: { value: unknown; testId?: string }) {
  const text = JSON.stringify(value, null, 2) ?? "undefined";
  let offset = 0;
  const parts = text.split(/(?<=\/)(?=[^/])/).map((part) => {
    const at = offset;
    offset += part.length;
    return (
      <Fragment key={at}>
        {at > 0 ? <wbr /> : null}
        {part}
      </Fragment>
    );
  });
  return (
    <pre className="json" data-testid={testId}>
      {parts}
    </pre>
  );
}
