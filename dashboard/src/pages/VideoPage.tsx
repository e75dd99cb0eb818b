import { useState } from 'react';
import { Link, useLocation, useNavigate, useParams } from 'react-router';
import { api, ApiProblem, call, type WebVideo } from '../api/client.ts';
import { leaveForCheckout } from '../api/checkout.ts';
import { ErrorNotice } from '../components/ErrorNotice.tsx';
import { aspectLabel, failureReason, formatDateTime, statusText } from '../components/format.ts';
import { useLoad } from '../components/use-load.ts';
import { renderEnded, useLiveVideo, watermarkRemoved, type LiveConnection } from '../live/video-status.ts';

const CONNECTION_WORDS: Record<LiveConnection, string> = {
  connecting: 'Connecting for live updates…',
  live: 'Live updates on',
  polling: 'Checking for updates every few seconds',
  done: '',
};

/** One video: its render followed live, then played inline, downloaded or deleted. */
export function VideoPage() {
  const { id = '' } = useParams();
  const location = useLocation();
  const navigate = useNavigate();
  const handedOver = location.state as { video?: WebVideo; awaitingRemoval?: boolean } | null;
  // Back from paying for the watermark's removal: follow the video until its re-render without it is done.
  const [awaitingRemoval, setAwaitingRemoval] = useState(Boolean(handedOver?.awaitingRemoval));
  const { video, connection, problem, follow } = useLiveVideo(id, handedOver?.video, awaitingRemoval ? watermarkRemoved : renderEnded);
  const pricing = useLoad((signal) => call(api.GET('/subscription/pricing', { signal })), 'pricing');
  const [confirming, setConfirming] = useState(false);
  const [deleting, setDeleting] = useState(false);
  const [deleteProblem, setDeleteProblem] = useState<ApiProblem>();
  const [buying, setBuying] = useState(false);
  const [buyProblem, setBuyProblem] = useState<ApiProblem>();

  const removeWatermark = async () => {
    setBuying(true);
    setBuyProblem(undefined);
    try {
      const session = await call(api.POST('/subscription/create-one-time-checkout', { body: { video_id: id } }));
      if (session.url) {
        leaveForCheckout(session.url, { purpose: 'watermark_removal', videoId: id });
        return;
      }
      // Already paid for: the re-render without the watermark (re)started.
      setBuying(false);
      setAwaitingRemoval(true);
      follow(watermarkRemoved);
    } catch (error) {
      setBuying(false);
      setBuyProblem(error instanceof ApiProblem ? error : new ApiProblem('The purchase could not start.', 'Try again.', undefined, undefined));
    }
  };
  const removalDone = Boolean(video && awaitingRemoval && watermarkRemoved(video));

  const remove = async () => {
    setDeleting(true);
    setDeleteProblem(undefined);
    try {
      await call(api.DELETE('/delete-video', { body: { video_id: id } }));
      void navigate('/app', { replace: true, state: { notice: 'The video was deleted.' } });
    } catch (error) {
      setDeleting(false);
      setDeleteProblem(error instanceof ApiProblem ? error : new ApiProblem('The video could not be deleted.', 'Try again.', undefined, undefined));
    }
  };

  if (video === null) {
    return (
      <section className="page narrow">
        <h1>Video not found</h1>
        <p>This video does not exist any more, or it belongs to another account.</p>
        <p>
          <Link to="/app">Back to my videos</Link>
        </p>
      </section>
    );
  }

  return (
    <section className="page narrow">
      <h1>{video?.status === 'completed' ? 'Your video is ready' : 'Your video'}</h1>
      <ErrorNotice problem={problem} title="Updates could not be loaded." />
      {!video ? (
        <p role="status">Loading…</p>
      ) : (
        <>
          {awaitingRemoval ? (
            <p className="notice" role="status">
              {removalDone
                ? video.status === 'failed'
                  ? 'Removing the watermark failed; the payment is kept and the removal can be started again from this page.'
                  : 'The watermark is gone: this is the new video.'
                : 'Payment received. The video is being made again without the watermark…'}
            </p>
          ) : null}
          <div className="status-panel" data-status={video.status}>
            <p className="status-line" role="status" aria-live="polite" data-testid="video-status">
              {statusText(video)}
            </p>
            {video.status === 'pending' || video.status === 'processing' ? (
              <progress max={100} value={video.progress} aria-label="Render progress" data-testid="video-progress">
                {video.progress}%
              </progress>
            ) : null}
            {connection !== 'done' ? <p className="muted small">{CONNECTION_WORDS[connection]}</p> : null}
            {video.status === 'failed' ? (
              <div className="notice notice-error">
                <p>{failureReason(video.error)}</p>
              </div>
            ) : null}
          </div>

          {video.status === 'completed' && video.video_url ? (
            <div className={`player player-${video.aspect.replace(':', '-')}`}>
              <video src={video.video_url} poster={video.thumbnail_url ?? undefined} controls playsInline preload="auto" aria-label="Your pet's singing video" />
            </div>
          ) : null}

          <dl className="facts">
            <dt>Shape</dt>
            <dd>{aspectLabel(video.aspect)}</dd>
            <dt>Made</dt>
            <dd>{formatDateTime(video.created_at)}</dd>
            <dt>Watermark</dt>
            <dd>{video.has_watermark ? 'Yes (free video)' : 'No'}</dd>
          </dl>

          <div className="actions">
            {video.status === 'completed' && video.video_url ? (
              <a className="button" href={video.video_url} download={`petsing-${video.id}.mp4`}>
                Download
              </a>
            ) : null}
            {/* Offered only where the service takes payments (GET /subscription/pricing says so). */}
            {video.status === 'completed' && video.has_watermark && !awaitingRemoval && pricing.data?.payments_available ? (
              <button type="button" className="button button-secondary" onClick={() => void removeWatermark()} disabled={buying} aria-busy={buying}>
                {buying ? 'Opening checkout…' : `Remove the watermark (${pricing.data.watermark_removal.formatted})`}
              </button>
            ) : null}
            {confirming ? (
              <div className="confirm" role="group" aria-label="Confirm deleting">
                <p>Delete this video for good? The credit it used is not given back.</p>
                <button type="button" className="button button-danger" onClick={() => void remove()} disabled={deleting} aria-busy={deleting}>
                  {deleting ? 'Deleting…' : 'Yes, delete it'}
                </button>
                <button type="button" className="button button-secondary" onClick={() => setConfirming(false)} disabled={deleting}>
                  Keep it
                </button>
              </div>
            ) : (
              <button type="button" className="button button-secondary" onClick={() => setConfirming(true)}>
                Delete video
              </button>
            )}
          </div>
          <ErrorNotice problem={deleteProblem} title="The video could not be deleted." />
          <ErrorNotice problem={buyProblem} title="The watermark cannot be removed right now." />
        </>
      )}
      <p>
        <Link to="/app">Back to my videos</Link> · <Link to="/app/new">Make another</Link>
      </p>
    </section>
  );
}
