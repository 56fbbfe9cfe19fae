// Containers, overlays and backdrops of the common consent managers, hidden with CSS after
// autoconsent (consent-dialogs.ts) has tried to refuse consent: what is still on screen then
// is taken out of the picture. Each is a CMP's own id or class, not a guess at a word such as
// "cookie", so a page's own content is not hidden with them.

/** Selectors of consent dialogs and their backdrops, by consent manager. */
export const CONSENT_DIALOG_SELECTORS: readonly string[] = [
  // OneTrust
  '#onetrust-consent-sdk',
  '#onetrust-banner-sdk',
  '#onetrust-pc-sdk',
  '.onetrust-pc-dark-filter',
  '.optanon-alert-box-wrapper',
  // Cookiebot (Usercentrics)
  '#CybotCookiebotDialog',
  '#CybotCookiebotDialogBodyUnderlay',
  // Usercentrics
  '#usercentrics-root',
  '#usercentrics-cmp-ui',
  '#uc-banner-modal',
  // Quantcast Choice
  '#qc-cmp2-container',
  '.qc-cmp2-container',
  '.qc-cmp-ui-container',
  // Didomi
  '#didomi-host',
  '#didomi-popup',
  '#didomi-notice',
  '.didomi-popup-backdrop',
  // TrustArc
  '#truste-consent-track',
  '#truste-consent-content',
  '#consent_blackbar',
  '#trustarc-banner-overlay',
  '.truste_overlay',
  '.truste_box_overlay',
  // Sourcepoint
  '[id^="sp_message_container_"]',
  // cookieconsent (Osano's open-source banner) and Osano
  '.cc-window.cc-banner',
  '.cc-window.cc-floating',
  '.osano-cm-window',
  '.osano-cm-dialog',
  // Google Funding Choices
  '.fc-consent-root',
  // consentmanager.net
  '#cmpbox',
  '#cmpbox2',
  '.cmpboxBG',
  // Complianz, CookieYes, Cookie Law Info, Borlabs, Cookie Notice, Moove (WordPress plugins)
  '#cmplz-cookiebanner-container',
  '.cmplz-cookiebanner',
  '.cky-consent-container',
  '.cky-overlay',
  '#cookie-law-info-bar',
  '.cli-modal-backdrop',
  '#BorlabsCookieBox',
  '#cookie-notice',
  '#moove_gdpr_cookie_info_bar',
  // iubenda, Termly, Klaro, Axeptio, Ketch, CookieFirst, Cookie Script, tarteaucitron
  '#iubenda-cs-banner',
  '#termly-code-snippet-support',
  '.klaro .cookie-notice',
  '.klaro .cookie-modal',
  '#axeptio_overlay',
  '#lanyard_root',
  '.cookiefirst-root',
  '#cookiescript_injected_wrapper',
  '#cookiescript_injected',
  '#tarteaucitronRoot',
  // Civic Cookie Control, Evidon, Piwik PRO, HubSpot, Shopify
  '#ccc-overlay',
  '#ccc-notify',
  '#ccc-module',
  '#_evidon_banner',
  '#_evidon-background',
  '#_evidon-barrier-wrapper',
  '#ppms_cm_consent_popup',
  '#ppms_cm_popup_overlay',
  '#hs-eu-cookie-confirmation',
  '#shopify-pc__banner',
];
