import { useEffect, useId, useMemo, useState, type FormEvent } from 'react';
import { Link, useNavigate } from 'react-router';
import { acceptedContentTypes, AUDIO_UPLOAD, MAX_AUDIO_SECONDS, megabytes, MIN_AUDIO_SECONDS, PHOTO_UPLOAD } from '@petsing/workflows/api-rules';
import { api, ApiProblem, call, type Aspect, type CheckedImage } from '../api/client.ts';
import { ErrorNotice } from '../components/ErrorNotice.tsx';
import { ASPECTS, formatDate, INTERVAL_WORDS, petName, PLAN_NAMES } from '../components/format.ts';
import { LinkSource } from '../components/LinkSource.tsx';
import { MouthMarker, type Point } from '../components/MouthMarker.tsx';
import { Recorder } from '../components/Recorder.tsx';
import { SpeechSource } from '../components/SpeechSource.tsx';
import { SongList } from '../components/SongList.tsx';
import { useAudioCheck } from '../components/use-audio-check.ts';
import type { HostedAudio } from '../components/use-hosted-audio.ts';
import { useLoad } from '../components/use-load.ts';

// The service's own upload limits (@petsing/workflows/api-rules): what the pickers offer and the messages say is what it takes.
const PHOTO_TYPES = acceptedContentTypes(PHOTO_UPLOAD).join(',');
const AUDIO_TYPES = acceptedContentTypes(AUDIO_UPLOAD).join(',');

/**
 * Where the video's sound comes from: a template song, a recording made here, an audio file (all three
 * uploaded), typed text spoken by a voice or a short video's sound (both hosted by the service first).
 */
type SoundSource = 'song' | 'recording' | 'file' | 'speech' | 'link';
const SOUND_SOURCES: { value: SoundSource; label: string }[] = [
  { value: 'song', label: 'A song' },
  { value: 'recording', label: 'Record your voice' },
  { value: 'file', label: 'An audio file' },
  { value: 'speech', label: 'Type what it says' },
  { value: 'link', label: 'A short video’s sound' },
];

/** What is still missing before the create, per sound source. */
const SOUND_MISSING: Record<SoundSource, string> = {
  song: 'Pick a song to continue.',
  recording: 'Record your voice to continue.',
  file: 'Choose an audio file to continue.',
  speech: 'Make the speech to continue.',
  link: 'Get the sound of the video to continue.',
};

/** Said next to "Make it sing" while a photo without a found face waits for the person to place the mouth. */
const PLACE_MARKER = 'Move the marker onto your pet\'s mouth to continue.';

/** Make a video: a photo (camera or library), the sound, a shape; credits and cost shown before the tap. */
export function Create() {
  const navigate = useNavigate();
  const ids = { photo: useId(), camera: useId(), song: useId(), shape: useId(), credits: useId(), source: useId(), audioFile: useId(), waiting: useId() };
  const account = useLoad((signal) => call(api.GET('/user/me', { signal })), 'me');
  const templates = useLoad((signal) => call(api.GET('/templates', { signal })), 'templates');
  const [photo, setPhoto] = useState<File>();
  const [photoProblem, setPhotoProblem] = useState<string>();
  const [chosenTemplate, setTemplateId] = useState<string>();
  const templateId = chosenTemplate ?? templates.data?.[0]?.id;
  const [source, setSource] = useState<SoundSource>('song');
  const [recording, setRecording] = useState<File>();
  const [audioFile, setAudioFile] = useState<File>();
  const [audioProblem, setAudioProblem] = useState<string>();
  const audio = source === 'recording' ? recording : source === 'file' ? audioFile : undefined;
  const [speech, setSpeech] = useState<HostedAudio>();
  const [linkSound, setLinkSound] = useState<HostedAudio>();
  // The audio check (POST /audio-check): a file, recording or short video's sound without a singing voice is said
  // before paying (speech is a voice).
  const voice = useAudioCheck(audio ?? (source === 'link' ? linkSound : undefined));
  const hosted = source === 'speech' ? speech : source === 'link' ? linkSound : undefined;
  const [aspect, setAspect] = useState<Aspect>('square');
  // The photo check (POST /images): where the pet's mouth was found, and where the person put the marker.
  const [check, setCheck] = useState<{ state: 'checking' } | { state: 'done'; image: CheckedImage } | { state: 'failed'; problem: ApiProblem }>();
  const [mouth, setMouth] = useState<Point>();
  const [moved, setMoved] = useState(false);
  const [problem, setProblem] = useState<ApiProblem>();
  const [busy, setBusy] = useState(false);

  const photoUrl = useMemo(() => (photo ? URL.createObjectURL(photo) : undefined), [photo]);
  useEffect(() => () => (photoUrl ? URL.revokeObjectURL(photoUrl) : undefined), [photoUrl]);
  useEffect(() => {
    if (!photo) return;
    const abort = new AbortController();
    const form = new FormData();
    form.append('image', photo);
    // The form carries the file; `body` only satisfies the operation's type.
    call(api.POST('/images', { body: { image: '' }, bodySerializer: () => form, signal: abort.signal })).then(
      (image) => {
        setCheck({ state: 'done', image });
        setMouth(image.face?.mouth ?? { x: 0.5, y: 0.6 });
      },
      (error: unknown) => {
        if (abort.signal.aborted) return;
        // The create checks the upload itself then; nothing is lost but the marker.
        setCheck({ state: 'failed', problem: error instanceof ApiProblem ? error : new ApiProblem('The photo could not be checked.', 'Try again.', undefined, undefined) });
      },
    );
    return () => abort.abort();
  }, [photo]);
  const checked = check?.state === 'done' ? check.image : undefined;
  const moveMouth = (point: Point) => {
    setMouth(point);
    setMoved(true);
  };

  const me = account.data;
  const noCredits = Boolean(me && !me.subscribed && me.free_credits < 1);
  const soundReady = source === 'song' ? Boolean(templateId) : Boolean(audio ?? hosted);
  // No face found: the marker starts in the middle of the photo, on nothing in particular, so nothing is made (or
  // paid for) until the person has put it on the pet's mouth; the create then sends that point.
  const placeMarker = Boolean(checked && !checked.face && !moved);
  const ready = Boolean(photo && soundReady && me && !noCredits && !busy && check?.state !== 'checking' && !placeMarker);
  // What "Make it sing" waits for, said next to it (and read with it: a button marked aria-disabled stays focusable).
  const waitingFor = !photo ? 'Pick a photo to continue.' : placeMarker ? PLACE_MARKER : !soundReady ? SOUND_MISSING[source] : undefined;

  const pickAudio = (file: File | undefined) => {
    setProblem(undefined);
    if (!file) return;
    if (file.size > AUDIO_UPLOAD.maxBytes) {
      setAudioProblem(`This file is larger than ${megabytes(AUDIO_UPLOAD.maxBytes)}. Choose a shorter one.`);
      return;
    }
    setAudioProblem(undefined);
    setAudioFile(file);
  };

  const pickPhoto = (file: File | undefined) => {
    setProblem(undefined);
    if (!file) return;
    if (file.size > PHOTO_UPLOAD.maxBytes) {
      setPhotoProblem(`This photo is larger than ${megabytes(PHOTO_UPLOAD.maxBytes)}. Choose a smaller one.`);
      return;
    }
    setPhotoProblem(undefined);
    // A new photo is checked afresh (the effect above): no marker until its answer.
    setCheck({ state: 'checking' });
    setMouth(undefined);
    setMoved(false);
    setPhoto(file);
  };

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    if (!photo || !ready) return;
    setBusy(true);
    setProblem(undefined);
    try {
      const form = new FormData();
      if (checked) {
        // The checked photo by id; the mouth when the person moved the marker (always, when no face was found:
        // the render node finds the eyes and chin around it).
        form.append('image_id', checked.id);
        if (mouth && moved) form.append('face', JSON.stringify({ mouth }));
      } else {
        form.append('image', photo);
      }
      form.append('aspect', aspect);
      let queued;
      if (source === 'song') {
        form.append('template_id', templateId!);
        queued = await call(api.POST('/create-with-template', { body: { template_id: templateId!, aspect }, bodySerializer: () => form }));
      } else {
        if (hosted) form.append('audio_url', hosted.url);
        else form.append('audio', audio!);
        queued = await call(api.POST('/create-with-audio', { body: { aspect }, bodySerializer: () => form }));
      }
      void navigate(`/app/videos/${queued.id}`, { state: { video: queued.video } });
    } catch (error) {
      setBusy(false);
      setProblem(error instanceof ApiProblem ? error : new ApiProblem('The video could not be created.', 'Try again.', undefined, undefined));
      account.reload();
    }
  };

  return (
    <section className="page">
      <h1>New video</h1>
      {me && noCredits ? <NoCreditsOffer resetAt={me.free_credits_reset_at} /> : null}
      <form onSubmit={(event) => void submit(event)} className="stack create-form" aria-describedby={ids.credits}>
        <fieldset>
          <legend>1. Your pet&apos;s photo</legend>
          <p className="muted">
            A clear, front-facing photo works best: {PHOTO_UPLOAD.formatNames}, up to {megabytes(PHOTO_UPLOAD.maxBytes)}.
          </p>
          <div className="photo-picker">
            {photoUrl && checked && mouth ? (
              <MouthMarker src={photoUrl} point={mouth} onMove={moveMouth} label="Your pet's mouth" />
            ) : photoUrl ? (
              <img src={photoUrl} alt="The photo you picked" className="photo-preview" />
            ) : (
              <div className="photo-preview photo-empty" aria-hidden="true" />
            )}
            <div className="photo-buttons">
              <label className="button button-secondary button-small file-button" htmlFor={ids.camera}>
                Take a photo
                <input id={ids.camera} type="file" accept={PHOTO_TYPES} capture="environment" className="visually-hidden" onChange={(event) => pickPhoto(event.target.files?.[0])} />
              </label>
              <label className="button button-secondary button-small file-button" htmlFor={ids.photo}>
                {photo ? 'Change photo' : 'Choose a photo'}
                <input id={ids.photo} name="image" type="file" accept={PHOTO_TYPES} className="visually-hidden" onChange={(event) => pickPhoto(event.target.files?.[0])} />
              </label>
            </div>
          </div>
          {photo && !checked ? <p className="muted">Picked: {photo.name}</p> : null}
          <div aria-live="polite" data-testid="face-check">
            {check?.state === 'checking' ? <p>Finding your pet&apos;s face…</p> : null}
            {checked ? (
              <p>
                {moved
                  ? 'The mouth is where you put the marker.'
                  : checked.face
                    ? `We found your ${petName(checked.face.species)}'s mouth under the marker. If it is wrong, drag it to the mouth.`
                    : 'No pet face was found. Put the marker on your pet\'s mouth: drag it, tap the mouth, or move it with the arrow keys.'}
              </p>
            ) : null}
            {checked?.face?.framing === 'small-face' ? (
              <p className="muted">Your {petName(checked.face.species)} is small in this photo, so the video shows it with more of the photo around it. A closer photo fills the frame.</p>
            ) : null}
          </div>
          {check?.state === 'failed' ? <ErrorNotice problem={check.problem} title="The photo could not be checked; the video is made from it anyway." /> : null}
          {photoProblem ? (
            <p className="field-error" role="alert">
              {photoProblem}
            </p>
          ) : null}
        </fieldset>

        <fieldset>
          <legend>2. The sound</legend>
          <div className="source-options" role="radiogroup" aria-label="Where the sound comes from">
            {SOUND_SOURCES.map((option) => (
              <div key={option.value} className="shape-option">
                <input type="radio" id={`${ids.source}-${option.value}`} name="sound" value={option.value} checked={source === option.value} onChange={() => setSource(option.value)} />
                <label htmlFor={`${ids.source}-${option.value}`}>{option.label}</label>
              </div>
            ))}
          </div>
          {source === 'song' ? (
            <>
              <ErrorNotice problem={templates.problem} title="The songs could not be loaded." />
              {templates.loading && !templates.data ? <p aria-live="polite">Loading songs…</p> : null}
              {templates.data ? <SongList templates={templates.data} chosen={templateId} name="template_id" idPrefix={ids.song} onChoose={setTemplateId} /> : null}
            </>
          ) : source === 'recording' ? (
            <Recorder onRecorded={setRecording} />
          ) : source === 'speech' ? (
            <SpeechSource onReady={setSpeech} />
          ) : source === 'link' ? (
            <LinkSource onReady={setLinkSound} />
          ) : (
            <div className="field">
              <label htmlFor={ids.audioFile}>
                Audio file ({AUDIO_UPLOAD.formatNames}; {MIN_AUDIO_SECONDS} to {MAX_AUDIO_SECONDS} seconds, up to {megabytes(AUDIO_UPLOAD.maxBytes)})
              </label>
              <input id={ids.audioFile} type="file" accept={AUDIO_TYPES} onChange={(event) => pickAudio(event.target.files?.[0])} />
              {audioProblem ? (
                <p className="field-error" role="alert">
                  {audioProblem}
                </p>
              ) : null}
            </div>
          )}
          {/* Said where the sound is chosen, before paying: the video would keep the pet's mouth at rest. */}
          {voice.warning ? (
            <div className="notice notice-warning" role="status" data-testid="no-voice">
              <p>{voice.warning}</p>
            </div>
          ) : null}
        </fieldset>

        <fieldset>
          <legend>3. The shape</legend>
          <div className="shape-options">
            {ASPECTS.map((option) => (
              <div key={option.value} className="shape-option">
                <input type="radio" id={`${ids.shape}-${option.value}`} name="aspect" value={option.value} checked={aspect === option.value} onChange={() => setAspect(option.value)} />
                <label htmlFor={`${ids.shape}-${option.value}`}>
                  <span className={`shape-icon shape-${option.value.replace(':', '-')}`} aria-hidden="true" />
                  <span>
                    <strong>{option.label}</strong> <span className="muted shape-detail">{option.detail}</span>
                  </span>
                </label>
              </div>
            ))}
          </div>
        </fieldset>

        <ErrorNotice problem={problem} title="The video could not be created." />
        <button
          type="submit"
          className="button button-large"
          disabled={busy}
          aria-disabled={!ready}
          aria-describedby={waitingFor ? ids.waiting : undefined}
          aria-busy={busy}
        >
          {busy ? 'Uploading…' : 'Make it sing'}
        </button>
        {waitingFor ? (
          <p id={ids.waiting} className="muted" data-testid="create-waiting">
            {waitingFor}
          </p>
        ) : null}
        {/* Below the button, so the photo, the song and the button fit a phone's two screens; read before the tap all the same. */}
        <div id={ids.credits} className="credits" aria-live="polite">
          <ErrorNotice problem={account.problem} title="Your free videos could not be counted." />
          {me ? (
            me.subscribed ? (
              <p>Your plan includes this video, without a watermark.</p>
            ) : noCredits ? (
              <p>No free videos are left this month: see the top of the page.</p>
            ) : (
              <p>
                <strong>
                  {me.free_credits} free {me.free_credits === 1 ? 'video' : 'videos'} left
                </strong>{' '}
                this month. This one uses 1 and carries a small watermark.
              </p>
            )
          ) : null}
        </div>
      </form>
      <p>
        <Link to="/app">Back to my videos</Link>
      </p>
    </section>
  );
}

/**
 * No free video left this month: when they come back, and the plans (prices in the visitor's currency) instead,
 * when this service takes payments.
 */
function NoCreditsOffer({ resetAt }: { resetAt: string }) {
  const pricing = useLoad((signal) => call(api.GET('/subscription/pricing', { signal })), 'pricing');
  const offered = pricing.data?.payments_available ? pricing.data : undefined;
  return (
    <div className="notice notice-warning" data-testid="no-credits">
      <p>
        <strong>You have used this month&apos;s free videos.</strong> They come back on {formatDate(resetAt)}.
        {offered ? ' With a plan you make as many videos as you like, without the watermark.' : null}
      </p>
      {offered ? (
        <>
          <ul>
            {offered.plans.map((plan) => (
              <li key={plan.plan_type}>
                {PLAN_NAMES[plan.plan_type] ?? plan.plan_type}: {plan.formatted} {INTERVAL_WORDS[plan.interval] ?? ''}
              </li>
            ))}
          </ul>
          <p>
            <Link to="/account" className="button">
              See the plans
            </Link>
          </p>
        </>
      ) : null}
    </div>
  );
}
