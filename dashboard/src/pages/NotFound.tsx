import { Link } from 'react-router';

export function NotFound() {
  return (
    <section className="page narrow">
      <h1>Page not found</h1>
      <p>There is nothing at this address.</p>
      <p>
        <Link to="/">Go to the start page</Link>
      </p>
    </section>
  );
}
