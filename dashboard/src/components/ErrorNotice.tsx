import type { ApiProblem } from '../api/client.ts';

/** An API failure in words: the service's message and, when it gave one, what to do about it. */
export function ErrorNotice({ problem, title }: { problem: ApiProblem | undefined; title?: string }) {
  if (!problem) return null;
  return (
    <div className="notice notice-error" role="alert">
      {title ? <p className="notice-title">{title}</p> : null}
      <p>{problem.message}</p>
      {problem.hint ? <p className="notice-hint">{problem.hint}</p> : null}
    </div>
  );
}
