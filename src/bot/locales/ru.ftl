# Тексты бота на русском. Каждый ключ должен быть и в en.ftl (test/bot-locales.spec.ts).

welcome = Добро пожаловать! Здесь можно купить доступ к VPN или открыть свой кабинет, тарифы и раздел синдиката.
button-account = Мой кабинет
button-plans = Тарифы
button-syndicate = Синдикат
button-buy = Купить в боте

partner-attached = Теперь вы с партнёром { $code }.
partner-kept = Вы уже с этим партнёром.
partner-other = Вы уже с другим партнёром, это не меняется.
partner-unknown = Эта партнёрская ссылка недействительна.
referral-attached = Вы пришли по приглашению друга. Добро пожаловать!

login-prompt = Приложение просит войти в ваш аккаунт. Запрос создан { $created }. Подтверждайте, только если вы сами только что начали вход на своём устройстве.
login-confirm = Подтвердить
login-cancel = Отменить
login-unavailable = Эта ссылка для входа истекла, уже использована или принадлежит другому аккаунту.
login-confirmed = Вход выполнен. Вернитесь в приложение.
login-cancelled = Вход отменён. Никто не вошёл.
login-gone = Этот запрос на вход больше не ждёт ответа.

plans-title = Выберите тариф:
plans-empty = Сейчас нет тарифов в продаже.
plan-button = { $name } · { $days } дн.
plan-gone = Этот тариф больше не продаётся.
plan-methods = Тариф { $name }: { $days } дн. Как вы хотите оплатить?
plan-no-methods = Этот тариф сейчас нельзя оплатить в боте.
method-ton = TON (цена в { $currency })
method-card = Картой · { $price } { $currency }
method-stars = Telegram Stars · { $stars }
button-back = Назад

ton-invoice = Отправьте { $amount } TON на адрес
    { $address }
    с текстовым комментарием: { $comment }
    Ссылка для кошелька: { $link }
    Затем нажмите «Я оплатил».
ton-paid = Я оплатил
invoice-title = Тариф { $name }
invoice-description = { $days } дн. доступа к VPN

paid-confirmed = Оплачено. Подписка { $plan } действует до { $until }.
paid-not-found = Мы пока не видим вашу оплату. Попробуйте через минуту.
paid-already = Этот счёт уже оплачен.
paid-unknown = Этот счёт не ваш или не существует.

checkout-unknown_invoice = Этот счёт не ваш или не существует.
checkout-not_pending = Этот счёт уже оплачен или истёк. Начните новую покупку.
checkout-wrong_price = Цена этого счёта изменилась. Начните новую покупку.

payment-credited = Оплата получена. Подписка { $plan } действует до { $until }.
payment-refunded = Этот платёж не удалось зачесть (счёт уже оплачен, истёк или сумма другая), поэтому он возвращён.
payment-refund-by-staff = Этот платёж не удалось зачесть (счёт уже оплачен, истёк или сумма другая). Наши сотрудники вернут его.

reminder-3d = Ваша подписка на VPN закончится через 3 дня, { $until }.
reminder-1d = Ваша подписка на VPN закончится завтра, { $until }.
reminder-ended = Ваша подписка на VPN закончилась { $until }.
reminder-renew = Продлить
warning-traffic80 = Вы израсходовали 80% трафика VPN за этот период.
warning-traffic100 = Вы израсходовали весь трафик VPN за этот период: VPN не работает, пока трафик не начнётся заново или вы не купите тариф.
warning-resets = Трафик начнётся заново { $at }.
warnings-off-button = Отключить эти сообщения
warnings-on-button = Включить эти сообщения
warnings-on = Вы получаете сообщения, когда трафик достигает 80% и 100%, и перед окончанием подписки.
warnings-off = Сообщения о трафике и окончании подписки отключены.

partner-area = Ваш партнёрский раздел: доход, выводы и партнёрская ссылка.

button-stale = Эта кнопка устарела. Отправьте /start, чтобы получить новое меню.
error-generic = Что-то пошло не так. Попробуйте ещё раз.
error-upstream = Оплата сейчас недоступна. Попробуйте позже.
error-too-many-invoices = У вас слишком много неоплаченных счетов. Оплатите один или дождитесь, пока он истечёт.

button-connect = Подключиться
connect-title = Ваша ссылка подписки. Добавьте её в VPN-приложение (Happ, v2rayNG, Hiddify, Streisand, Clash, sing-box): скопируйте её или откройте страницу ниже, там есть кнопка для каждого приложения.
connect-devices = Устройства: { $count } из { $limit }
connect-no-devices = Ссылкой ещё не пользовалось ни одно устройство.
connect-device = • { $name }, последний раз { $seen }
connect-device-new = • { $name }, ещё не подключалось
button-connect-page = Открыть страницу подключения
button-devices = Управлять устройствами
