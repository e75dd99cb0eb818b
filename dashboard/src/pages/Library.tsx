import { Link, useLocation, useSearchParams } from 'react-router';
import { api, call } from '../api/client.ts';
import { ErrorNotice } from '../components/ErrorNotice.tsx';
import { aspectLabel, failureReason, formatDateTime, statusText } from '../components/format.ts';
import { useLoad } from '../components/use-load.ts';

const PAGE_SIZE = 12;

/** Every video of the account (web and API made), newest first, a page at a time. */
export function Library() {
  const [params, setParams] = useSearchParams();
  const location = useLocation();
  const notice = (location.state as { notice?: string } | null)?.notice;
  const page = Math.max(1, Number.parseInt(params.get('page') ?? '1', 10) || 1);
  const videos = useLoad((signal) => call(api.GET('/user/videos', { params: { query: { page, pageSize: PAGE_SIZE } }, signal })), `videos-${page}`);
  // The song names (cached by the browser for an hour); a video without a template sang the person's own sound.
  const templates = useLoad((signal) => call(api.GET('/templates', { signal })), 'templates');
  const songOf = (templateId: string | null) =>
    templateId === null ? 'Your own sound' : (templates.data?.find((template) => template.id === templateId)?.name ?? 'A song');
  const data = videos.data;

  return (
    <section className="page">
      <div className="page-heading">
        <h1>My videos</h1>
        <Link to="/app/new" className="button">
          New video
        </Link>
      </div>
      {notice ? (
        <p className="notice" role="status">
          {notice}
        </p>
      ) : null}
      <ErrorNotice problem={videos.problem} title="Your videos could not be loaded." />
      {videos.loading && !data ? <p role="status">Loading…</p> : null}
      {data && data.total === 0 ? (
        <div className="empty card">
          <p>No videos yet.</p>
          <p>
            <Link to="/app/new">Make your first singing video</Link>
          </p>
        </div>
      ) : null}
      {data && data.videos.length > 0 ? (
        <ul className="video-list" aria-busy={videos.loading}>
          {data.videos.map((video) => (
            <li key={video.id} className="card video-item">
              <Link to={`/app/videos/${video.id}`} className="video-link">
                {video.thumbnail_url ? (
                  <img src={video.thumbnail_url} alt="" className="thumb" loading="lazy" />
                ) : (
                  <span className="thumb thumb-empty" aria-hidden="true" />
                )}
                <span className="video-text">
                  <span className="video-title">{songOf(video.template_id)}</span>
                  <span className={`badge badge-${video.status}`}>{statusText(video)}</span>
                  {video.has_watermark ? <span className="badge badge-watermark">Watermark</span> : null}
                  <span className="muted small">
                    {aspectLabel(video.aspect)} · {formatDateTime(video.created_at)}
                    {video.origin === 'api' ? ' · made with the API' : ''}
                  </span>
                  {video.status === 'failed' ? <span className="failure small">{failureReason(video.error)}</span> : null}
                </span>
              </Link>
            </li>
          ))}
        </ul>
      ) : null}
      {data && data.total_pages > 1 ? (
        <nav className="pager" aria-label="Pages">
          <button type="button" className="button button-secondary" disabled={page <= 1} onClick={() => setParams({ page: String(page - 1) })}>
            Newer
          </button>
          <span>
            Page {data.page} of {data.total_pages}
          </span>
          <button type="button" className="button button-secondary" disabled={!data.has_more} onClick={() => setParams({ page: String(page + 1) })}>
            Older
          </button>
        </nav>
      ) : null}
    </section>
  );
}
