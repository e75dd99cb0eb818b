import { useRef, type KeyboardEvent, type PointerEvent } from 'react';

export type Point = { x: number; y: number };

const clamp = (value: number) => Math.min(1, Math.max(0, value));
const round = (value: number) => Math.round(value * 1000) / 1000;

/**
 * The photo with a marker on the pet's mouth (fractions of the photo's width and height, as POST /images
 * answers them). The marker follows a drag (mouse, touch, pen), a tap on the photo, or the arrow keys
 * (1 % a press, 5 % with Shift).
 */
export function MouthMarker({ src, point, onMove, label }: { src: string; point: Point; onMove: (point: Point) => void; label: string }) {
  const frame = useRef<HTMLDivElement>(null);
  const dragging = useRef(false);

  const moveTo = (clientX: number, clientY: number) => {
    const box = frame.current?.getBoundingClientRect();
    if (!box || box.width === 0 || box.height === 0) return;
    onMove({ x: round(clamp((clientX - box.left) / box.width)), y: round(clamp((clientY - box.top) / box.height)) });
  };
  const down = (event: PointerEvent<HTMLElement>) => {
    dragging.current = true;
    event.currentTarget.setPointerCapture(event.pointerId);
    moveTo(event.clientX, event.clientY);
    event.preventDefault();
  };
  const move = (event: PointerEvent<HTMLElement>) => dragging.current && moveTo(event.clientX, event.clientY);
  const up = () => (dragging.current = false);
  const key = (event: KeyboardEvent<HTMLButtonElement>) => {
    const step = event.shiftKey ? 0.05 : 0.01;
    const moves: Record<string, Point> = { ArrowLeft: { x: -step, y: 0 }, ArrowRight: { x: step, y: 0 }, ArrowUp: { x: 0, y: -step }, ArrowDown: { x: 0, y: step } };
    const delta = moves[event.key];
    if (!delta) return;
    event.preventDefault();
    onMove({ x: round(clamp(point.x + delta.x)), y: round(clamp(point.y + delta.y)) });
  };

  return (
    <div className="marker-frame" ref={frame} onPointerDown={down} onPointerMove={move} onPointerUp={up} onPointerCancel={up}>
      <img src={src} alt="The photo you picked" draggable={false} />
      <button
        type="button"
        className="mouth-marker"
        style={{ left: `${point.x * 100}%`, top: `${point.y * 100}%` }}
        onKeyDown={key}
        aria-label={`${label}: ${Math.round(point.x * 100)}% across, ${Math.round(point.y * 100)}% down. Drag it, or use the arrow keys.`}
        data-x={point.x}
        data-y={point.y}
      />
    </div>
  );
}
