export { renderVideo, rerenderWithoutWatermark, renderProgressSignal, progressQuery } from './render-video.workflow.ts';
