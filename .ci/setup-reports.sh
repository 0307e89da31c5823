#!/usr/bin/env bash
# Install the OS tools the report tests need (idempotent; apt-get only when missing):
#   poppler-utils: pdftoppm/pdftotext to look at rendered PDF pages
#   chromium:      headless browser that opens the HTML report
#   fonts-dejavu-core: a font WeasyPrint and Chromium can always find
set -euo pipefail
need=()
command -v pdftoppm >/dev/null 2>&1 || need+=(poppler-utils)
command -v chromium >/dev/null 2>&1 || need+=(chromium)
[ -e /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ] || need+=(fonts-dejavu-core)
if [ "${#need[@]}" -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
echo "setup-reports: pdftoppm $(command -v pdftoppm), chromium $(command -v chromium)"
