export { renderVideo, rerenderWithoutWatermark, renderTemplatePreview, renderProgressSignal, progressQuery } from './render-video.workflow.ts';
