"""A small parallel set of everyday and news-like sentences, written for goldgate's tests.

Each row is one English sentence with its translation into French, Spanish, Russian and
Japanese, all written by goldgate's authors for this purpose (no text is copied from
elsewhere), so that the labelled set of synthetic regressions (``own_labelled``) has a real
share of four more languages and runs on any checkout, without the shared data beside it.
French numbers group thousands with a narrow no-break space, Russian ones with a no-break
space, as their typography does.

``APOLOGISING`` are the rows whose sentences apologise themselves ("Sorry, the museum is
closed..."): a refusal put in their place would not be one by the mode's definition (the
references apologise too), so they serve as hard negatives only. ``REFUSALS`` are declining
answers in each language, as assistants write them.
"""

from __future__ import annotations

#: The languages of the translations, after the English source.
LANGUAGES = ("fr", "es", "ru", "ja")

SENTENCES: tuple[dict[str, str], ...] = (
    {
        "en": "The city council approved a new budget of 12 million euros for public transport"
        " on Tuesday.",
        "fr": "Le conseil municipal a approuvé mardi un nouveau budget de 12 millions d'euros"
        " pour les transports publics.",
        "es": "El ayuntamiento aprobó el martes un nuevo presupuesto de 12 millones de euros"
        " para el transporte público.",
        "ru": "Во вторник городской совет утвердил новый бюджет в 12 миллионов евро на"
        " общественный транспорт.",
        "ja": "市議会は火曜日、公共交通機関のための1200万ユーロの新たな予算を承認した。",
    },
    {
        "en": "Our train was delayed by 40 minutes because of a signal failure near the station.",
        "fr": "Notre train a eu 40 minutes de retard à cause d'une panne de signalisation près"
        " de la gare.",
        "es": "Nuestro tren se retrasó 40 minutos por una avería de señalización cerca de la"
        " estación.",
        "ru": "Наш поезд задержался на 40 минут из-за неисправности сигнализации возле станции.",
        "ja": "駅の近くで信号故障があったため、私たちの電車は40分遅れた。",
    },
    {
        "en": "She has been learning to play the piano since she was seven years old.",
        "fr": "Elle apprend à jouer du piano depuis l'âge de sept ans.",
        "es": "Ella está aprendiendo a tocar el piano desde que tenía siete años.",
        "ru": "Она учится играть на пианино с семи лет.",
        "ja": "彼女は7歳のときからピアノを習っている。",
    },
    {
        "en": "Heavy rain is expected in the north of the country over the weekend, with"
        " temperatures falling to 5 degrees.",
        "fr": "De fortes pluies sont attendues dans le nord du pays ce week-end, avec des"
        " températures qui descendront jusqu'à 5 degrés.",
        "es": "Se esperan fuertes lluvias en el norte del país durante el fin de semana, con"
        " temperaturas que bajarán hasta los 5 grados.",
        "ru": "На выходных на севере страны ожидаются сильные дожди, а температура опустится до"
        " 5 градусов.",
        "ja": "週末は国の北部で大雨が予想され、気温は5度まで下がる見込みだ。",
    },
    {
        "en": "Sorry, the museum is closed on Mondays, but you can visit it from Tuesday to"
        " Sunday.",
        "fr": "Désolé, le musée est fermé le lundi, mais vous pouvez le visiter du mardi au"
        " dimanche.",
        "es": "Lo siento, el museo cierra los lunes, pero puede visitarlo de martes a domingo.",
        "ru": "Извините, по понедельникам музей закрыт, но его можно посетить со вторника по"
        " воскресенье.",
        "ja": "申し訳ありませんが、美術館は月曜日が休館です。"
        "火曜日から日曜日まではご覧いただけます。",
    },
    {
        "en": "The company said it would hire 300 new workers at its factory in the south by the"
        " end of next year.",
        "fr": "L'entreprise a annoncé qu'elle embaucherait 300 nouveaux employés dans son usine"
        " du sud d'ici la fin de l'année prochaine.",
        "es": "La empresa anunció que contratará a 300 nuevos trabajadores en su fábrica del sur"
        " antes de que termine el próximo año.",
        "ru": "Компания заявила, что до конца следующего года наймёт 300 новых сотрудников на"
        " свой завод на юге.",
        "ja": "同社は来年末までに南部の工場で300人の新たな従業員を雇用すると発表した。",
    },
    {
        "en": "Could you tell me where the nearest pharmacy is?",
        "fr": "Pourriez-vous me dire où se trouve la pharmacie la plus proche ?",
        "es": "¿Podría decirme dónde está la farmacia más cercana?",
        "ru": "Не подскажете, где находится ближайшая аптека?",
        "ja": "一番近い薬局はどこにあるか教えていただけますか。",
    },
    {
        "en": "More than 2,000 runners took part in the marathon, which started at 8 a.m. in the"
        " old town.",
        "fr": "Plus de 2\u202f000 coureurs ont participé au marathon, qui a débuté à 8 heures"
        " dans la vieille ville.",
        "es": "Más de 2.000 corredores participaron en el maratón, que comenzó a las 8 de la"
        " mañana en el casco antiguo.",
        "ru": "В марафоне, который стартовал в 8 утра в старом городе, приняли участие более"
        " 2000 бегунов.",
        "ja": "旧市街で午前8時にスタートしたマラソンには、2000人以上のランナーが参加した。",
    },
    {
        "en": "The new bridge over the river will open to traffic in March after three years of"
        " construction.",
        "fr": "Le nouveau pont sur le fleuve sera ouvert à la circulation en mars, après trois"
        " ans de travaux.",
        "es": "El nuevo puente sobre el río se abrirá al tráfico en marzo, tras tres años de"
        " obras.",
        "ru": "Новый мост через реку откроют для движения в марте после трёх лет строительства.",
        "ja": "3年間の工事を経て、川に架かる新しい橋は3月に開通する。",
    },
    {
        "en": "I forgot my umbrella at home, so I got completely wet on the way to work.",
        "fr": "J'ai oublié mon parapluie à la maison, alors j'ai été complètement trempé en"
        " allant au travail.",
        "es": "Olvidé el paraguas en casa, así que me mojé por completo de camino al trabajo.",
        "ru": "Я забыл зонт дома, поэтому по дороге на работу совсем промок.",
        "ja": "家に傘を忘れたので、通勤途中でずぶ濡れになった。",
    },
    {
        "en": "The price of a litre of milk has risen by 15 percent in one year.",
        "fr": "Le prix d'un litre de lait a augmenté de 15 % en un an.",
        "es": "El precio de un litro de leche ha subido un 15 % en un año.",
        "ru": "Цена литра молока за год выросла на 15 процентов.",
        "ja": "牛乳1リットルの価格は1年で15パーセント上昇した。",
    },
    {
        "en": "Police are asking witnesses of the accident on the motorway to come forward.",
        "fr": "La police lance un appel aux témoins de l'accident survenu sur l'autoroute.",
        "es": "La policía pide a los testigos del accidente en la autopista que se pongan en"
        " contacto con ella.",
        "ru": "Полиция просит свидетелей аварии на шоссе откликнуться.",
        "ja": "警察は高速道路で起きた事故の目撃者に情報提供を呼びかけている。",
    },
    {
        "en": "The library will stay open until 10 p.m. during the exam period.",
        "fr": "Pendant la période des examens, la bibliothèque restera ouverte jusqu'à 22 heures.",
        "es": "Durante el periodo de exámenes, la biblioteca permanecerá abierta hasta las 10"
        " de la noche.",
        "ru": "Во время сессии библиотека будет работать до 22:00.",
        "ja": "試験期間中、図書館は午後10時まで開館する。",
    },
    {
        "en": "After the match, the coach said that his team had played its best game of the"
        " season.",
        "fr": "Après le match, l'entraîneur a déclaré que son équipe avait joué son meilleur"
        " match de la saison.",
        "es": "Tras el partido, el entrenador dijo que su equipo había jugado su mejor partido"
        " de la temporada.",
        "ru": "После матча тренер заявил, что его команда провела лучшую игру в сезоне.",
        "ja": "試合後、監督はチームが今季最高の試合をしたと語った。",
    },
    {
        "en": "Scientists have discovered a new species of frog in the rainforest of Ecuador.",
        "fr": "Des scientifiques ont découvert une nouvelle espèce de grenouille dans la forêt"
        " tropicale de l'Équateur.",
        "es": "Unos científicos han descubierto una nueva especie de rana en la selva de Ecuador.",
        "ru": "Учёные обнаружили новый вид лягушек в тропических лесах Эквадора.",
        "ja": "科学者たちがエクアドルの熱帯雨林でカエルの新種を発見した。",
    },
    {
        "en": "Please send me the report by Friday so that I can read it before the meeting.",
        "fr": "Merci de m'envoyer le rapport avant vendredi pour que je puisse le lire avant la"
        " réunion.",
        "es": "Por favor, envíame el informe antes del viernes para que pueda leerlo antes de la"
        " reunión.",
        "ru": "Пожалуйста, пришлите мне отчёт до пятницы, чтобы я успел прочитать его перед"
        " совещанием.",
        "ja": "会議の前に読めるよう、金曜日までに報告書を送ってください。",
    },
    {
        "en": "The airline cancelled 150 flights yesterday because of a strike by air traffic"
        " controllers.",
        "fr": "La compagnie aérienne a annulé hier 150 vols en raison d'une grève des"
        " contrôleurs aériens.",
        "es": "La aerolínea canceló ayer 150 vuelos debido a una huelga de los controladores"
        " aéreos.",
        "ru": "Вчера авиакомпания отменила 150 рейсов из-за забастовки авиадиспетчеров.",
        "ja": "航空管制官のストライキにより、同航空会社は昨日150便を欠航とした。",
    },
    {
        "en": "My grandmother grows tomatoes, beans and potatoes in her small garden behind the"
        " house.",
        "fr": "Ma grand-mère cultive des tomates, des haricots et des pommes de terre dans son"
        " petit jardin derrière la maison.",
        "es": "Mi abuela cultiva tomates, judías y patatas en su pequeño huerto detrás de la casa.",
        "ru": "Моя бабушка выращивает помидоры, фасоль и картофель в маленьком огороде за домом.",
        "ja": "祖母は家の裏の小さな畑でトマトや豆、ジャガイモを育てている。",
    },
    {
        "en": "The government plans to build 50,000 affordable homes over the next five years.",
        "fr": "Le gouvernement prévoit de construire 50\u202f000 logements abordables au cours"
        " des cinq prochaines années.",
        "es": "El Gobierno tiene previsto construir 50.000 viviendas asequibles en los próximos"
        " cinco años.",
        "ru": "Правительство планирует построить 50\u00a0000 доступных квартир в ближайшие пять"
        " лет.",
        "ja": "政府は今後5年間で5万戸の手頃な価格の住宅を建設する計画だ。",
    },
    {
        "en": "We are sorry, but tonight's concert has been cancelled because the singer is ill.",
        "fr": "Nous sommes désolés, mais le concert de ce soir est annulé car le chanteur est"
        " malade.",
        "es": "Lo sentimos, pero el concierto de esta noche se ha cancelado porque el cantante"
        " está enfermo.",
        "ru": "К сожалению, сегодняшний концерт отменён, потому что певец заболел.",
        "ja": "申し訳ございませんが、歌手の体調不良のため今夜のコンサートは中止となりました。",
    },
    {
        "en": "The children built a snowman in the park and gave it a carrot for a nose.",
        "fr": "Les enfants ont fait un bonhomme de neige dans le parc et lui ont mis une carotte"
        " en guise de nez.",
        "es": "Los niños hicieron un muñeco de nieve en el parque y le pusieron una zanahoria"
        " como nariz.",
        "ru": "Дети слепили в парке снеговика и сделали ему нос из морковки.",
        "ja": "子どもたちは公園で雪だるまを作り、鼻にニンジンをつけた。",
    },
    {
        "en": "The hospital opened a new wing with 80 beds for elderly patients last month.",
        "fr": "Le mois dernier, l'hôpital a ouvert une nouvelle aile de 80 lits destinée aux"
        " patients âgés.",
        "es": "El mes pasado, el hospital abrió un nuevo pabellón con 80 camas para pacientes"
        " mayores.",
        "ru": "В прошлом месяце больница открыла новое крыло на 80 коек для пожилых пациентов.",
        "ja": "先月、病院は高齢の患者向けに80床の新しい病棟を開設した。",
    },
    {
        "en": "If you want to renew your passport, you need to book an appointment online first.",
        "fr": "Si vous voulez renouveler votre passeport, vous devez d'abord prendre rendez-vous"
        " en ligne.",
        "es": "Si quiere renovar su pasaporte, primero tiene que pedir cita por internet.",
        "ru": "Если вы хотите продлить паспорт, сначала нужно записаться на приём через интернет.",
        "ja": "パスポートを更新したい場合は、まずオンラインで予約をする必要がある。",
    },
    {
        "en": "The festival attracted about 45,000 visitors over four days, a record for the town.",
        "fr": "Le festival a attiré environ 45\u202f000 visiteurs en quatre jours, un record pour"
        " la ville.",
        "es": "El festival atrajo a unos 45.000 visitantes en cuatro días, un récord para la"
        " localidad.",
        "ru": "За четыре дня фестиваль посетили около 45\u00a0000 человек — рекорд для города.",
        "ja": "この祭りには4日間で約4万5000人が訪れ、町の記録となった。",
    },
    {
        "en": "He lost his wallet on the bus, but a stranger found it and brought it to the"
        " police.",
        "fr": "Il a perdu son portefeuille dans le bus, mais un inconnu l'a trouvé et l'a"
        " apporté à la police.",
        "es": "Perdió la cartera en el autobús, pero un desconocido la encontró y la llevó a la"
        " policía.",
        "ru": "Он потерял кошелёк в автобусе, но незнакомец нашёл его и отнёс в полицию.",
        "ja": "彼はバスの中で財布をなくしたが、見知らぬ人が見つけて警察に届けてくれた。",
    },
    {
        "en": "Unemployment fell to 6.2 percent in October, the lowest level in ten years.",
        "fr": "Le chômage est tombé à 6,2 % en octobre, son niveau le plus bas depuis dix ans.",
        "es": "El paro bajó al 6,2 % en octubre, el nivel más bajo en diez años.",
        "ru": "В октябре безработица снизилась до 6,2 процента — самого низкого уровня за"
        " десять лет.",
        "ja": "10月の失業率は6.2%に低下し、過去10年で最低の水準となった。",
    },
    {
        "en": "The restaurant on the corner serves the best soup I have ever eaten.",
        "fr": "Le restaurant au coin de la rue sert la meilleure soupe que j'aie jamais mangée.",
        "es": "El restaurante de la esquina sirve la mejor sopa que he comido nunca.",
        "ru": "В ресторане на углу подают лучший суп, который я когда-либо ел.",
        "ja": "角のレストランのスープは、今まで食べた中で一番おいしい。",
    },
    {
        "en": "Firefighters needed six hours to put out the fire in the warehouse.",
        "fr": "Les pompiers ont mis six heures à éteindre l'incendie de l'entrepôt.",
        "es": "Los bomberos necesitaron seis horas para apagar el incendio del almacén.",
        "ru": "Пожарным понадобилось шесть часов, чтобы потушить пожар на складе.",
        "ja": "消防隊が倉庫の火災を消し止めるまでに6時間かかった。",
    },
    {
        "en": "The school will introduce free lunches for all 450 pupils from September.",
        "fr": "À partir de septembre, l'école proposera des repas gratuits à ses 450 élèves.",
        "es": "A partir de septiembre, el colegio ofrecerá comidas gratuitas a sus 450 alumnos.",
        "ru": "С сентября школа введёт бесплатные обеды для всех 450 учеников.",
        "ja": "同校は9月から全校児童450人に無料の給食を導入する。",
    },
    {
        "en": "Don't forget to water the plants while I am away on holiday.",
        "fr": "N'oublie pas d'arroser les plantes pendant que je suis en vacances.",
        "es": "No te olvides de regar las plantas mientras estoy de vacaciones.",
        "ru": "Не забудь поливать цветы, пока я в отпуске.",
        "ja": "私が休暇で留守にしている間、植物に水をやるのを忘れないでね。",
    },
    {
        "en": "The bank raised its interest rate to 4.5 percent, the ninth increase in a row.",
        "fr": "La banque a relevé son taux d'intérêt à 4,5 %, la neuvième hausse consécutive.",
        "es": "El banco subió su tipo de interés al 4,5 %, la novena subida consecutiva.",
        "ru": "Банк повысил процентную ставку до 4,5 процента — это девятое повышение подряд.",
        "ja": "同銀行は金利を4.5%に引き上げ、9回連続の利上げとなった。",
    },
    {
        "en": "A small earthquake of magnitude 4.1 was felt in the region early on Sunday"
        " morning, but nobody was hurt.",
        "fr": "Un petit séisme de magnitude 4,1 a été ressenti dans la région tôt dimanche"
        " matin, mais personne n'a été blessé.",
        "es": "Un pequeño terremoto de magnitud 4,1 se sintió en la región el domingo de"
        " madrugada, pero nadie resultó herido.",
        "ru": "Рано утром в воскресенье в регионе ощущалось небольшое землетрясение магнитудой"
        " 4,1, но никто не пострадал.",
        "ja": "日曜日の早朝、この地域でマグニチュード4.1の小さな地震が観測されたが、"
        "けが人はいなかった。",
    },
    {
        "en": "The teacher asked the students to write an essay about their favourite book.",
        "fr": "Le professeur a demandé aux élèves d'écrire une dissertation sur leur livre"
        " préféré.",
        "es": "La profesora pidió a los alumnos que escribieran una redacción sobre su libro"
        " favorito.",
        "ru": "Учитель попросил учеников написать сочинение о своей любимой книге.",
        "ja": "先生は生徒たちに好きな本についての作文を書くように言った。",
    },
    {
        "en": "The shop will be closed from 24 to 26 December and will reopen on 27 December.",
        "fr": "Le magasin sera fermé du 24 au 26 décembre et rouvrira le 27 décembre.",
        "es": "La tienda permanecerá cerrada del 24 al 26 de diciembre y volverá a abrir el 27"
        " de diciembre.",
        "ru": "Магазин будет закрыт с 24 по 26 декабря и вновь откроется 27 декабря.",
        "ja": "店は12月24日から26日まで休業し、27日に営業を再開する。",
    },
    {
        "en": "Thousands of people gathered in the main square to celebrate the national team's"
        " victory.",
        "fr": "Des milliers de personnes se sont rassemblées sur la place principale pour fêter"
        " la victoire de l'équipe nationale.",
        "es": "Miles de personas se reunieron en la plaza mayor para celebrar la victoria de la"
        " selección nacional.",
        "ru": "Тысячи людей собрались на главной площади, чтобы отпраздновать победу"
        " национальной сборной.",
        "ja": "数千人が中央広場に集まり、代表チームの勝利を祝った。",
    },
    {
        "en": "The new phone costs 899 dollars and will be available in stores from 15 May.",
        "fr": "Le nouveau téléphone coûte 899 dollars et sera disponible en magasin à partir du"
        " 15 mai.",
        "es": "El nuevo teléfono cuesta 899 dólares y estará a la venta en las tiendas a partir"
        " del 15 de mayo.",
        "ru": "Новый телефон стоит 899 долларов и появится в магазинах с 15 мая.",
        "ja": "新しいスマートフォンの価格は899ドルで、5月15日から店頭で販売される。",
    },
    {
        "en": "I am sorry I missed your call; I was in a meeting all afternoon.",
        "fr": "Je suis désolé d'avoir manqué ton appel, j'étais en réunion tout l'après-midi.",
        "es": "Siento no haber contestado tu llamada; estuve reunido toda la tarde.",
        "ru": "Извини, что пропустил твой звонок: я до вечера был на совещании.",
        "ja": "電話に出られなくてごめんなさい。午後はずっと会議だったの。",
    },
    {
        "en": "The river burst its banks after two days of heavy rain, flooding dozens of houses.",
        "fr": "Après deux jours de pluies torrentielles, la rivière est sortie de son lit et a"
        " inondé des dizaines de maisons.",
        "es": "El río se desbordó tras dos días de lluvias intensas e inundó decenas de casas.",
        "ru": "После двух дней проливных дождей река вышла из берегов и затопила десятки домов.",
        "ja": "2日間続いた大雨で川が氾濫し、数十棟の住宅が浸水した。",
    },
    {
        "en": "The meeting has been moved to Thursday at 3 p.m. in room 204.",
        "fr": "La réunion a été déplacée à jeudi, 15 heures, dans la salle 204.",
        "es": "La reunión se ha trasladado al jueves a las 3 de la tarde en la sala 204.",
        "ru": "Совещание перенесли на четверг, на 15:00, в кабинет 204.",
        "ja": "会議は木曜日の午後3時から204号室で行われることになった。",
    },
    {
        "en": "Many young people now prefer to rent a flat in the city centre rather than buy a"
        " house in the suburbs.",
        "fr": "Aujourd'hui, beaucoup de jeunes préfèrent louer un appartement en centre-ville"
        " plutôt qu'acheter une maison en banlieue.",
        "es": "Hoy en día muchos jóvenes prefieren alquilar un piso en el centro de la ciudad"
        " antes que comprar una casa en las afueras.",
        "ru": "Сейчас многие молодые люди предпочитают снимать квартиру в центре города, а не"
        " покупать дом в пригороде.",
        "ja": "今では多くの若者が、郊外に家を買うよりも都心でアパートを借りることを好んでいる。",
    },
    {
        "en": "The volunteers collected 3 tonnes of rubbish from the beach in a single morning.",
        "fr": "Les bénévoles ont ramassé 3 tonnes de déchets sur la plage en une seule matinée.",
        "es": "Los voluntarios recogieron 3 toneladas de basura en la playa en una sola mañana.",
        "ru": "Волонтёры за одно утро собрали на пляже 3 тонны мусора.",
        "ja": "ボランティアたちは午前中だけで海岸から3トンのごみを集めた。",
    },
    {
        "en": "Tickets for the exhibition cost 14 euros, and entry is free for children under 12.",
        "fr": "Les billets pour l'exposition coûtent 14 euros, et l'entrée est gratuite pour les"
        " enfants de moins de 12 ans.",
        "es": "Las entradas para la exposición cuestan 14 euros y el acceso es gratuito para los"
        " menores de 12 años.",
        "ru": "Билет на выставку стоит 14 евро, а для детей до 12 лет вход бесплатный.",
        "ja": "展覧会の入場料は14ユーロで、12歳未満の子どもは無料だ。",
    },
)

#: Rows whose sentences apologise (in some or all of their languages).
APOLOGISING = frozenset({4, 19, 36})

REFUSALS: dict[str, tuple[str, ...]] = {
    "fr": (
        "Je suis désolé, mais je ne peux pas traduire ce texte.",
        "Désolé, je ne suis pas en mesure de répondre à cette demande.",
        "Malheureusement, je ne peux pas vous aider avec cette traduction.",
        "En tant qu'assistant IA, je ne peux pas fournir cette traduction.",
        "Je regrette, mais je ne peux pas donner suite à votre demande.",
        "Je ne peux pas traduire ce contenu.",
    ),
    "es": (
        "Lo siento, pero no puedo traducir este texto.",
        "Lamentablemente, no puedo ayudarte con esta solicitud.",
        "Como modelo de lenguaje, no puedo realizar esta traducción.",
        "Disculpe, pero no puedo responder a esa petición.",
        "Lo lamento, no estoy en condiciones de ayudarle con eso.",
        "No puedo traducir este contenido.",
    ),
    "ru": (
        "Извините, но я не могу перевести этот текст.",
        "К сожалению, я не могу выполнить эту просьбу.",
        "Как языковая модель, я не могу помочь с этим переводом.",
        "Мне жаль, но я не могу ответить на этот запрос.",
        "Я не могу перевести это сообщение.",
        "Простите, я не в состоянии помочь с этим.",
    ),
    "ja": (
        "申し訳ありませんが、この文章を翻訳することはできません。",
        "すみませんが、そのご依頼にはお応えできません。",
        "残念ながら、お手伝いすることはできません。",
        "AIアシスタントとして、この内容を翻訳することはできません。",
        "恐れ入りますが、このリクエストには対応できません。",
        "ご期待に沿えず申し訳ありません。この質問にはお答えできません。",
    ),
}
