/** The widget's version (`window.ServiceWidget.version`, SPEC part 9); also its versioned path `/v{version}/widget.js`. */
export const WIDGET_VERSION = '1.0.1';
