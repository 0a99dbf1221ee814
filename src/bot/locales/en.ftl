# The bot's English texts. Every key here must exist in ru.ftl too (test/bot-locales.spec.ts).

welcome = Welcome! Buy access to the VPN here, or open your account, the plans or the syndicate area.
button-account = My account
button-plans = Plans
button-syndicate = Syndicate
button-buy = Buy in the bot

partner-attached = You are now with the partner { $code }.
partner-kept = You are with this partner already.
partner-other = You are with another partner already; that does not change.
partner-unknown = This partner link is not valid.
referral-attached = You came on a friend's invitation. Welcome!

login-prompt = An app asks to sign in to your account. The request was made at { $created }. Confirm only if you started it yourself just now on your own device.
login-confirm = Confirm
login-cancel = Cancel
login-unavailable = This sign-in link has expired, was used already, or belongs to another account.
login-confirmed = Signed in. Go back to the app.
login-cancelled = Sign-in cancelled. Nobody was signed in.
login-gone = This sign-in request is no longer waiting.

plans-title = Choose a plan:
plans-empty = No plans are on sale right now.
plan-button = { $name } · { $days } days
plan-gone = This plan is not on sale any more.
plan-methods = Plan { $name }: { $days } days. How would you like to pay?
plan-no-methods = This plan cannot be paid in the bot right now.
method-ton = TON (priced in { $currency })
method-card = Card · { $price } { $currency }
method-stars = Telegram Stars · { $stars }
button-back = Back

ton-invoice = Send { $amount } TON to
    { $address }
    with this text comment: { $comment }
    Link for your wallet: { $link }
    Then press "I paid".
ton-paid = I paid
invoice-title = Plan { $name }
invoice-description = { $days } days of VPN access

paid-confirmed = Paid. Your { $plan } subscription runs until { $until }.
paid-not-found = We have not seen your payment yet. Try again in a minute.
paid-already = This invoice is paid already.
paid-unknown = This invoice is not yours or does not exist.

checkout-unknown_invoice = This invoice is not yours or does not exist.
checkout-not_pending = This invoice is paid already or has expired. Please start a new purchase.
checkout-wrong_price = The price of this invoice has changed. Please start a new purchase.

payment-credited = Payment received. Your { $plan } subscription runs until { $until }.
payment-refunded = This payment could not be credited (the invoice is paid already, has expired, or the amount differs), so it has been refunded.
payment-refund-by-staff = This payment could not be credited (the invoice is paid already, has expired, or the amount differs). Our staff will refund it.

reminder-3d = Your VPN subscription ends in 3 days, on { $until }.
reminder-1d = Your VPN subscription ends tomorrow, on { $until }.
reminder-ended = Your VPN subscription ended on { $until }.
reminder-renew = Renew
warning-traffic80 = You have used 80% of your VPN traffic for this period.
warning-traffic100 = You have used all of your VPN traffic for this period: the VPN stops until it starts again or you buy a plan.
warning-resets = Your traffic starts again from zero on { $at }.
warnings-off-button = Turn these messages off
warnings-on-button = Turn these messages on
warnings-on = You get messages when your traffic reaches 80% and 100% and before your subscription ends.
warnings-off = Messages about your traffic and your subscription's end are off.

partner-area = Your partner area: earnings, withdrawals and your partner link.

button-stale = This button is out of date. Send /start for a fresh menu.
error-generic = Something went wrong. Please try again.
error-upstream = Payments are not available right now. Please try again later.
error-too-many-invoices = You have too many unpaid invoices. Pay one, or wait until one expires.

button-connect = Connect
connect-title = Your subscription link. Add it to a VPN app (Happ, v2rayNG, Hiddify, Streisand, Clash, sing-box): copy it, or open the page below, which has a button for each app.
connect-devices = Devices: { $count } of { $limit }
connect-no-devices = No device has used the link yet.
connect-device = • { $name }, last seen { $seen }
connect-device-new = • { $name }, not seen yet
button-connect-page = Open the connection page
button-devices = Manage devices
